/** Pure vote tally for the swarm `vote` operation: normalised answers, majority and agreement. */
export interface VoteTally {
  winner: string | null;
  agreement: number;
  counts: Array<{ answer: string; votes: number }>;
  /** Votes that matched none of the given options. */
  abstained: number;
}

const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();

/** The option an answer names (first option whose normalised text appears as a whole phrase), or null. */
export function matchOption(answer: string, options: string[]): string | null {
  const a = ` ${norm(answer)} `;
  let best: { option: string; at: number } | null = null;
  for (const o of options) {
    const at = a.indexOf(` ${norm(o)} `);
    if (at >= 0 && (!best || at < best.at)) best = { option: o, at };
  }
  return best?.option ?? null;
}

/** Without options, an answer's first line (normalised, 80 chars) is its vote. */
export function tallyVotes(answers: string[], options?: string[]): VoteTally {
  const counts = new Map<string, number>();
  let abstained = 0;
  for (const raw of answers) {
    const vote = options?.length ? matchOption(raw, options) : norm(raw.split('\n')[0] ?? '').slice(0, 80) || null;
    if (vote === null) abstained++;
    else counts.set(vote, (counts.get(vote) ?? 0) + 1);
  }
  const sorted = [...counts.entries()]
    .map(([answer, votes]) => ({ answer, votes }))
    .sort((x, y) => y.votes - x.votes || x.answer.localeCompare(y.answer));
  const top = sorted[0];
  const tie = sorted.length > 1 && sorted[1].votes === top.votes;
  return {
    winner: top && !tie ? top.answer : null,
    agreement: answers.length ? (top?.votes ?? 0) / answers.length : 0,
    counts: sorted,
    abstained,
  };
}
