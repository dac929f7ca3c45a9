// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IERC20, ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC4626} from "@openzeppelin/contracts/token/ERC20/extensions/ERC4626.sol";

/// @notice OpenZeppelin's ERC-4626 vault with a chosen decimals offset (virtual shares): share
/// decimals = asset decimals + offset. Yield is simulated by transferring assets to the vault.
contract TestVault is ERC4626 {
    uint8 private immutable _offset;

    constructor(IERC20 asset_, string memory name_, string memory symbol_, uint8 offset_)
        ERC20(name_, symbol_)
        ERC4626(asset_)
    {
        _offset = offset_;
    }

    function _decimalsOffset() internal view override returns (uint8) {
        return _offset;
    }
}
