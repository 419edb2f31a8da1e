import { createStorage } from "../storage/index.js";

/**
 * `acp-agui assign-owner`: gives the threads and runs without an owner to one principal, so that
 * data from before ownership (reachable by admin keys only) becomes that key's or user's. Opens
 * the database as the server does (migrations included); a SQLite file a server holds is refused.
 */
export async function assignOwner(
  database: string,
  owner: string,
): Promise<{ threads: number; runs: number }> {
  const storage = createStorage(database);
  await storage.open();
  try {
    return await storage.assignUnowned(owner);
  } finally {
    await storage.close();
  }
}
