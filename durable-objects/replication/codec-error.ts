/** What the replication decoder throws for input it cannot accept. */
export class CodecError extends Error {
  override name = "CodecError";
}
