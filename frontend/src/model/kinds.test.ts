import { describe, expect, it } from "vitest";
import { difficultyOptions, kindGroups } from "./kinds";
import type { ServerInfo } from "./types";

const info: ServerInfo = {
  env: "memex", reveal_truth_after_done: false, agent_policies: ["heuristic"], glass_box: true,
  kinds: { suspicious: ["structuring", "trade_based"], benign: ["cash_business"] },
  fixed_cases: ["1mdb"], difficulties: ["easy", "medium", "hard"],
};

describe("kindGroups", () => {
  it("lists the kinds the server reports, by class, plus the fixed cases", () => {
    const groups = kindGroups(info);
    expect(groups.map((g) => g.label)).toEqual(["Sample", "Suspicious", "Benign look-alikes", "Fixed case"]);
    expect(groups[1]?.options).toEqual([["structuring", "structuring"], ["trade_based", "trade based"]]);
    expect(groups[3]?.options).toEqual([["case:1mdb", "1mdb case"]]);
  });

  it("offers only the samplers until the server has answered", () => {
    expect(kindGroups(null).map((g) => g.label)).toEqual(["Sample"]);
  });
});

describe("difficultyOptions", () => {
  it("lists the difficulties the server reports", () => {
    expect(difficultyOptions(info, "medium")).toEqual(["easy", "medium", "hard"]);
  });

  it("offers only the current choice until the server has answered", () => {
    expect(difficultyOptions(null, "medium")).toEqual(["medium"]);
  });
});
