import { MemoryEventStore } from "../src/index.js";
import { runEventStoreSuite } from "./event-store-suite.js";

runEventStoreSuite("memory", async () => new MemoryEventStore());
