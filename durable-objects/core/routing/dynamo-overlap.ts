/**
 * The `overlap` of a `SelectResponse` (reference selection §4.3, Dynamo's `MooncakeOverlapSummary`
 * after Mooncake RFC #1403): what the chosen worker holds of the prompt, over its whole DP range
 * rather than the chosen rank alone, in matched tokens.
 */
import type { TierHits } from "./dynamo-cost";

/** Dynamo counts these in `u32`, saturating. */
const U32_MAX = 0xffff_ffff;

/** Fields in the wire's order; every figure is in tokens (blocks × block size). */
export interface OverlapSummary {
  /** The most of the prompt any tier reaches on any rank: the largest of the three below. */
  longestMatched: number;
  /** The longest device prefix among the ranks. */
  gpu: number;
  /** Each rank's device prefix, keyed by the rank in decimal; a rank with no overlap shows 0. */
  dp: Record<string, number>;
  /** The longest prefix through host-pinned memory (device plus host blocks). */
  cpu: number;
  /** The longest prefix through disk (device, host, disk and external blocks). */
  disk: number;
}

/** The summary over `ranks`: every rank of the chosen worker, each with its tier hits (zeros if none). */
export function overlapSummary(
  ranks: ReadonlyArray<{ dpRank: number; hits: TierHits }>,
  blockSize: number,
): OverlapSummary {
  const summary: OverlapSummary = { longestMatched: 0, gpu: 0, dp: {}, cpu: 0, disk: 0 };
  for (const { dpRank, hits } of [...ranks].sort((a, b) => a.dpRank - b.dpRank)) {
    const gpuBlocks = saturate(hits.device);
    const cpuBlocks = saturate(gpuBlocks + hits.hostPinned);
    const diskBlocks = saturate(cpuBlocks + hits.disk + hits.external);
    const gpu = saturate(gpuBlocks * blockSize);
    summary.dp[String(dpRank)] = gpu;
    summary.gpu = Math.max(summary.gpu, gpu);
    summary.cpu = Math.max(summary.cpu, saturate(cpuBlocks * blockSize));
    summary.disk = Math.max(summary.disk, saturate(diskBlocks * blockSize));
  }
  summary.longestMatched = Math.max(summary.gpu, summary.cpu, summary.disk);
  return summary;
}

function saturate(n: number): number {
  return Math.min(n, U32_MAX);
}
