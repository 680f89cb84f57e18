/**
 * The per-step reward timeline. OpenEnv semantics (DESIGN §5): each observation's `reward` is
 * that step's reward only, the episode return is their sum, and the terminal step's reward is
 * the terminal score alone. Shaping rewards are a few thousandths while the terminal score is
 * up to ±1, so the chart uses a symmetric log scale (`symlog`) that keeps both readable.
 */
import type { Frame, TerminalScore } from "./types";

export interface RewardPoint {
  frame: number;
  step: number;
  reward: number;
  cumulative: number;
  terminal: boolean;
  breakdown: Record<string, number>;
  tool: string | null;
}

export function rewardSeries(frames: Frame[]): RewardPoint[] {
  const points: RewardPoint[] = [];
  let cumulative = 0;
  for (const f of frames) {
    const r = f.observation.reward;
    if (r === null || f.action === null) continue;
    cumulative += r;
    points.push({
      frame: f.index,
      step: f.observation.step,
      reward: r,
      cumulative: Math.round(cumulative * 1e6) / 1e6,
      terminal: f.observation.metadata.terminal !== undefined,
      breakdown: f.observation.reward_breakdown,
      tool: f.observation.tool,
    });
  }
  return points;
}

/** Symmetric log: linear within ±`linear`, logarithmic beyond; sign preserved. */
export function symlog(value: number, linear = 0.001): number {
  const sign = value < 0 ? -1 : 1;
  return sign * Math.log10(1 + Math.abs(value) / linear);
}

/** The terminal score of the episode, from the final frame's metadata, if it has ended. */
export function terminalOf(frames: Frame[]): TerminalScore | null {
  for (let i = frames.length - 1; i >= 0; i--) {
    const t = frames[i]?.observation.metadata.terminal;
    if (t) return t;
  }
  return null;
}

/** The name of the largest-magnitude component of a step's reward, for colouring. */
export function dominantPart(breakdown: Record<string, number>): string | null {
  let best: string | null = null;
  let bestAbs = -1;
  for (const [k, v] of Object.entries(breakdown)) {
    if (Math.abs(v) > bestAbs) {
      best = k;
      bestAbs = Math.abs(v);
    }
  }
  return best;
}
