// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

interface IERC4626Position {
    function balanceOf(address account) external view returns (uint256);
    function convertToAssets(uint256 shares) external view returns (uint256);
}

/// @notice Never deployed. Its creation code runs inside one `eth_call` (a "deployless" read), so a
/// wallet's shares and the assets the vault converts them to come from one call at one block:
/// `convertToAssets` needs the result of `balanceOf`, which a Multicall3 batch cannot feed it.
contract PositionLens {
    function position(address vault, address wallet) external view returns (uint256 shares, uint256 assets) {
        shares = IERC4626Position(vault).balanceOf(wallet);
        assets = IERC4626Position(vault).convertToAssets(shares);
    }
}
