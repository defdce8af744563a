import type { LiveRequest } from "./live-request";

/**
 * Live requests ordered by deadline, as an intrusive doubly linked list. Local adds arrive in clock
 * order with one expiry age, so an insert is an append; a request that carries an earlier time
 * (restored or replicated) walks back from the tail only past the requests due after it.
 * Removal is O(1) and keeps nothing of a freed request, unlike a heap with lazy deletion.
 */
export class ExpiryList {
  head: LiveRequest | null = null;
  private tail: LiveRequest | null = null;

  insert(req: LiveRequest): void {
    let after = this.tail;
    while (after && after.deadline > req.deadline) after = after.expiryPrev;
    req.expiryPrev = after;
    req.expiryNext = after ? after.expiryNext : this.head;
    if (req.expiryNext) req.expiryNext.expiryPrev = req;
    else this.tail = req;
    if (after) after.expiryNext = req;
    else this.head = req;
  }

  remove(req: LiveRequest): void {
    if (req.expiryPrev) req.expiryPrev.expiryNext = req.expiryNext;
    else if (this.head === req) this.head = req.expiryNext;
    else return;
    if (req.expiryNext) req.expiryNext.expiryPrev = req.expiryPrev;
    else this.tail = req.expiryPrev;
    req.expiryPrev = null;
    req.expiryNext = null;
  }

  clear(): void {
    this.head = null;
    this.tail = null;
  }
}
