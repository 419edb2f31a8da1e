import { createStorage } from "../../src/storage/index.js";
import { describeIsolation } from "./suite.js";

describeIsolation("SQLite", async () => createStorage(":memory:"));
