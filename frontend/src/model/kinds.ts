import type { ServerInfo } from "./types";

type KindGroup = { label: string; options: Array<[string, string]> };

/** The kind picker, from the kinds the server reports in /info (never a hard-coded list). */
export function kindGroups(info: ServerInfo | null): KindGroup[] {
  const groups: KindGroup[] = [
    { label: "Sample", options: [["", "any kind (sampled)"], ["suspicious", "any suspicious"], ["benign", "any benign"]] },
  ];
  const named = (kinds: string[]): Array<[string, string]> => kinds.map((k) => [k, k.replace(/_/g, " ")]);
  if (info?.kinds) {
    groups.push({ label: "Suspicious", options: named(info.kinds.suspicious) });
    groups.push({ label: "Benign look-alikes", options: named(info.kinds.benign) });
  }
  if (info?.fixed_cases?.length) {
    groups.push({ label: "Fixed case", options: info.fixed_cases.map((c) => [`case:${c}`, `${c} case`]) });
  }
  if (info?.adversarial_cases) {
    const n = info.adversarial_cases;
    groups.push({ label: "Adversary-made", options: Array.from({ length: n }, (_, i) => [`adv:adversarial/${i}`, `adversarial case ${i}`]) });
  }
  return groups;
}

/** The difficulty picker, from the difficulties the server reports in /info; until it has
 * answered, only the current choice (the server's default). */
export function difficultyOptions(info: ServerInfo | null, current: string): string[] {
  return info?.difficulties?.length ? info.difficulties : [current];
}
