import { encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { END_SEQ, eventCount, liveBatch, replayReply, seqBytes } from "../../relay/frames";
import { offsetPort, parseOptions } from "../../relay/options";
import type { RankStatus } from "../../relay/rank";
import { metricsText } from "../../relay/status";

/** The worked example of engine-kv-events §4 A: a store of two blocks and a removal, rank 0. */
const EXAMPLE_A = Buffer.from(
  "93cb41da3054981000009298ab426c6f636b53746f726564926566c0dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2010c0a3475055c093ac426c6f636b52656d6f7665649165a347505500",
  "hex",
);
const empty = new Uint8Array(0);
const text = (s: string) => new TextEncoder().encode(s);

describe("engine ZMQ frames", () => {
  it("reads a live [topic, seq, payload] with the seq as 8-byte big-endian", () => {
    const seq = 0x0102_0304_0506_0708n;
    expect(Buffer.from(seqBytes(seq)).toString("hex")).toBe("0102030405060708");
    expect(liveBatch([text("kv-events"), seqBytes(seq), EXAMPLE_A])).toEqual({ seq, payload: EXAMPLE_A });
    expect(liveBatch([empty, seqBytes(END_SEQ - 1n), EXAMPLE_A]).seq).toBe(END_SEQ - 1n);
  });

  it("refuses a live message of another shape", () => {
    expect(() => liveBatch([seqBytes(1n), EXAMPLE_A])).toThrow("2 frames, not 3");
    expect(() => liveBatch([empty, new Uint8Array(4), EXAMPLE_A])).toThrow("4 bytes, not 8");
  });

  it("reads both replay layouts and SGLang's, and their end markers", () => {
    const end = seqBytes(END_SEQ);
    // vLLM ≤ 0.25: [b"", seq, payload], end [b"", ff×8, b""].
    expect(replayReply([empty, seqBytes(7n), EXAMPLE_A])).toEqual({ seq: 7n, payload: EXAMPLE_A });
    expect(replayReply([empty, end, empty])).toBe("end");
    // vLLM ≥ 0.26, TensorRT-LLM: [b"", topic, seq, payload], end [b"", b"", ff×8, b""]; the topic may be empty.
    expect(replayReply([empty, text("kv@pod@m"), seqBytes(8n), EXAMPLE_A])).toEqual({
      seq: 8n,
      payload: EXAMPLE_A,
    });
    expect(replayReply([empty, empty, seqBytes(9n), EXAMPLE_A])).toEqual({ seq: 9n, payload: EXAMPLE_A });
    expect(replayReply([empty, empty, end, empty])).toBe("end");
    // SGLang without the delimiter: [seq, payload], end [ff×8, b""].
    expect(replayReply([seqBytes(10n), EXAMPLE_A])).toEqual({ seq: 10n, payload: EXAMPLE_A });
    expect(replayReply([end, empty])).toBe("end");
  });

  it("refuses a replay reply of another shape", () => {
    expect(() => replayReply([empty])).toThrow("replay reply: 1 frames");
    expect(() => replayReply([empty, empty, empty, seqBytes(1n), EXAMPLE_A])).toThrow(
      "replay reply: 5 frames",
    );
  });

  it("counts a payload's events in every batch form, and an unreadable payload as one", () => {
    expect(eventCount(EXAMPLE_A)).toBe(2);
    expect(eventCount(encode([1.5, []]))).toBe(0);
    expect(eventCount(encode({ ts: 1.5, events: [["AllBlocksCleared"]], data_parallel_rank: 0 }))).toBe(1);
    expect(eventCount(new Uint8Array([0xc1]))).toBe(1);
  });
});

describe("relay options", () => {
  const base = ["--engine", "tcp://127.0.0.1:5557", "--tracker", "http://t", "--model", "m", "--worker-id"];

  it("puts rank i on the engine's ports + i and the tracker's dp_rank + i", () => {
    const options = parseOptions(
      [
        ...base,
        "18446744073709551615",
        "--replay",
        "tcp://127.0.0.1:5600",
        "--dp-rank",
        "4",
        "--dp-size",
        "2",
      ],
      {},
    );
    expect(options.workerId).toBe(18_446_744_073_709_551_615n);
    expect(options.ranks).toEqual([
      { dpRank: 4, engine: "tcp://127.0.0.1:5557", replay: "tcp://127.0.0.1:5600" },
      { dpRank: 5, engine: "tcp://127.0.0.1:5558", replay: "tcp://127.0.0.1:5601" },
    ]);
    expect(offsetPort("ipc:///tmp/kv", 2)).toBe("ipc:///tmp/kv_dp2");
  });

  it("takes the token from the environment, and names what is wrong", () => {
    expect(parseOptions([...base, "7"], { EDGE_KV_RELAY_TOKEN: "tok" }).token).toBe("tok");
    expect(() => parseOptions([...base, "18446744073709551616"], {})).toThrow("--worker-id");
    expect(() => parseOptions(base.slice(2).concat("7"), {})).toThrow("--engine is required");
    expect(() => parseOptions([...base, "7", "--batch-ms", "-1"], {})).toThrow("--batch-ms");
    expect(() => parseOptions([...base, "7", "--engine", "http://x"], {})).toThrow("--engine");
  });
});

describe("relay metrics", () => {
  it("writes each rank's lag, backlog and counters as Prometheus families", () => {
    const rank = (dp_rank: number, lag_ms: number): RankStatus => ({
      dp_rank,
      engine: "tcp://e:5557",
      epoch: "relay-1.0",
      acked_seq: "9",
      pending_batches: 2,
      pending_events: 5,
      lag_ms,
      batches_received: 11,
      events_received: 30,
      batches_applied: 9,
      calls: 4,
      call_retries: 1,
      replays: 2,
      replayed_batches: 3,
      gaps: 0,
      epochs: 1,
      breaks: 0,
      malformed_messages: 0,
    });
    const text = metricsText([rank(0, 12), rank(1, 0)]);
    expect(text).toContain('# TYPE edge_kv_relay_lag_ms gauge\nedge_kv_relay_lag_ms{dp_rank="0"} 12\n');
    expect(text).toContain('edge_kv_relay_lag_ms{dp_rank="1"} 0\n');
    expect(text).toContain(
      '# TYPE edge_kv_relay_replayed_batches_total counter\nedge_kv_relay_replayed_batches_total{dp_rank="0"} 3\n',
    );
    expect(text.split("\n").filter((l) => l.startsWith("# TYPE")).length).toBe(14);
  });
});
