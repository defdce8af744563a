/**
 * The client's error type: a call the service refused, with its status and its text as the service
 * wrote it (`{"error": "<text>"}`; Dynamo's texts on the selection routes), so callers match on
 * the same texts a Dynamo client does.
 */
import type { ClientResponse } from "hono/client";
import { type Exact, exactJson } from "./exact";

export class SlotTrackerError extends Error {
  override readonly name = "SlotTrackerError";

  constructor(
    /** The HTTP status (4xx or 5xx). */
    readonly status: number,
    /** The service's `error` text, verbatim. */
    message: string,
    /** The whole answer, integers exact (`{ error }` and, where Dynamo adds them, `details`). */
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** The answer's error text: its `error` field, else the body itself, else the status. */
function errorText(status: number, text: string, body: unknown): string {
  if (typeof body === "object" && body !== null && "error" in body && typeof body.error === "string") {
    return body.error;
  }
  return text === "" ? `HTTP ${status}` : text;
}

/**
 * Reads a successful answer with 64-bit integers exact; any other status (outside `alsoOk`) throws a
 * {@link SlotTrackerError}. `/selection/ready` lists `503` in `alsoOk`: not ready is an answer there.
 */
export async function readOk<T>(res: ClientResponse<T>, alsoOk: readonly number[] = []): Promise<Exact<T>> {
  const text = await res.text();
  let body: unknown;
  try {
    body = text === "" ? undefined : exactJson(text);
  } catch {
    body = text;
  }
  if (!res.ok && !alsoOk.includes(res.status)) {
    throw new SlotTrackerError(res.status, errorText(res.status, text, body), body);
  }
  return body as Exact<T>;
}
