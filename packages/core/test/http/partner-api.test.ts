/** The API suite in-process: `handle()` called directly, no socket. */
import { inProcess, runApiSuite } from "./api-suite/index.js";

runApiSuite("in-process handle()", inProcess);
