export { DEMO_CREDENTIALS } from "./demo.js";
