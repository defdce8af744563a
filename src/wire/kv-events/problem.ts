/**
 * A refusal found while decoding, thrown inside the decoder and turned into a result by
 * `decodeKvEventBody`, so nothing escapes it. The message names the batch, the event and the field.
 */

export class KvProblem extends Error {
  constructor(
    readonly status: 400 | 413 | 422,
    message: string,
  ) {
    super(message);
  }
}

/** Where a value sits, for messages: `batch 0, event 3`. */
export interface Place {
  batch: number;
  /** Index in the batch's `events`, or -1 for the batch itself. */
  event: number;
}

export function placeText(place: Place): string {
  return place.event < 0 ? `batch ${place.batch}` : `batch ${place.batch}, event ${place.event}`;
}

/** A malformed value: 400. */
export function malformed(place: Place, what: string): KvProblem {
  return new KvProblem(400, `${placeText(place)}: ${what}`);
}

/** A well-formed event that contradicts itself: 422. */
export function inconsistent(place: Place, what: string): KvProblem {
  return new KvProblem(422, `${placeText(place)}: ${what}`);
}
