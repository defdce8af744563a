/**
 * The object's own name, kept in its storage. `ctx.id.name` is not there when the runtime starts an
 * object for its alarm (after a reset or eviction), yet the alarm must know which (model, tenant,
 * replica) it serves to expire and replicate the right state; so the name is stored with the first
 * write and read back when the id does not carry it.
 */

const TABLE = "CREATE TABLE IF NOT EXISTS identity (name TEXT NOT NULL)";

export function storedName(sql: SqlStorage): string | undefined {
  const exists = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'identity'").toArray();
  if (exists.length === 0) return undefined;
  const row = sql.exec("SELECT name FROM identity LIMIT 1").toArray()[0];
  return row ? String(row.name) : undefined;
}

/** Stores `name` once (later calls change nothing). */
export function storeName(sql: SqlStorage, name: string): void {
  sql.exec(TABLE);
  sql.exec("INSERT INTO identity (name) SELECT ? WHERE NOT EXISTS (SELECT 1 FROM identity)", name);
}
