import { afterAll } from "vitest";
import { dropLeftoverSchemas, openDisposable, requirePostgres } from "../storage/pg-helpers.js";
import { describeIsolation } from "./suite.js";

// Fails the whole file, loudly, when PostgreSQL is not there: these tests never skip.
await requirePostgres();
afterAll(dropLeftoverSchemas);

describeIsolation("PostgreSQL", () => openDisposable());
