import type { AgentTier, AgentTierName } from '../../schema/agents';
import type { PublicLane } from '../../schema/model-config';
import type { ToolDef } from '../tools/types';

/**
 * The agent complexity classifier: deterministic features of the request → a score → a tier.
 * Same input, same tier (no model call), so a retried request and the tests agree.
 *
 * Features (each adds to the score): text length (query + context) over 300 characters (+1) or
 * 1,500 (+2); one or more URLs (+1); two or more parts (numbered or bulleted lines, `?`-separated
 * questions, "then"/"and also" chains) (+1), four or more (+2); analysis words (compare, analyse,
 * investigate, research, evaluate, plan) (+1); three or more requested tools (+1).
 * Score 0 → quick, 1–2 → standard, 3+ → deep. A code change (a change verb such as fix, implement,
 * refactor, "pull request", beside a code marker: a fence, a source file name, code syntax, a repo)
 * → code, whatever the score; only the code tier is handed to a configured delegate.
 */
export const TIER_POLICY: Record<
  AgentTierName,
  { lane: PublicLane; maxSteps: number; maxTokens: number; allows: (t: ToolDef) => boolean }
> = {
  quick: { lane: 'mid', maxSteps: 3, maxTokens: 8_000, allows: (t) => t.readOnly && !t.external },
  standard: { lane: 'svc-oracle', maxSteps: 8, maxTokens: 32_000, allows: (t) => t.readOnly },
  deep: { lane: 'mid-strong', maxSteps: 16, maxTokens: 96_000, allows: (t) => !t.destructive },
  code: { lane: 'mid-strong', maxSteps: 16, maxTokens: 96_000, allows: (t) => !t.destructive },
};

const URL_RE = /\bhttps?:\/\/[^\s)>\]]+/gi;
const ANALYSIS_RE = /\b(compare|comparison|analy[sz]e|analysis|investigate|research|evaluate|trade-?offs?|plan)\b/i;
const CHANGE_RE =
  /\b(fix|implement|refactor|patch|rewrite|add (a |an )?(test|feature|endpoint|function)|pull request|open a pr|commit|bug ?fix)\b/i;
const CODE_RE =
  /```|\b[\w./-]+\.(ts|tsx|js|jsx|py|go|rs|java|rb|php|c|cc|cpp|h|cs|kt|swift|sql|sh)\b|\b(function|def|class|import|const|return)\s+\w|=>|\brepo(sitory)?\b|\bgithub\.com\//i;

export interface ClassifyInput {
  query: string;
  context?: unknown;
  tools?: string[];
}

export interface Classified {
  name: AgentTierName;
  score: number;
  reasons: string[];
}

function partsOf(text: string): number {
  const listLines = text.split('\n').filter((l) => /^\s*(\d+[.)]|[-*•])\s+\S/.test(l)).length;
  const questions = (text.match(/\?/g) ?? []).length;
  const chains = (text.match(/\b(and then|then|and also|after that|finally)\b/gi) ?? []).length;
  return Math.max(listLines, questions, chains + 1);
}

export function classifyQuery(input: ClassifyInput): Classified {
  const ctx =
    input.context === undefined
      ? ''
      : typeof input.context === 'string'
        ? input.context
        : JSON.stringify(input.context);
  const text = `${input.query}\n${ctx}`;
  const reasons: string[] = [];
  let score = 0;
  const chars = text.trim().length;
  if (chars > 1500) {
    score += 2;
    reasons.push(`length ${chars} > 1500`);
  } else if (chars > 300) {
    score += 1;
    reasons.push(`length ${chars} > 300`);
  }
  const urls = (text.match(URL_RE) ?? []).length;
  if (urls) {
    score += 1;
    reasons.push(`${urls} url(s)`);
  }
  const parts = partsOf(input.query);
  if (parts >= 4) {
    score += 2;
    reasons.push(`${parts} parts`);
  } else if (parts >= 2) {
    score += 1;
    reasons.push(`${parts} parts`);
  }
  if (ANALYSIS_RE.test(input.query)) {
    score += 1;
    reasons.push('analysis wording');
  }
  if ((input.tools?.length ?? 0) >= 3) {
    score += 1;
    reasons.push(`${input.tools!.length} tools requested`);
  }
  if (CHANGE_RE.test(input.query) && CODE_RE.test(text)) {
    reasons.push('code change (change verb beside a code marker)');
    return { name: 'code', score, reasons };
  }
  return { name: score >= 3 ? 'deep' : score >= 1 ? 'standard' : 'quick', score, reasons };
}

/**
 * The full tier of a run: the classified (or the agent's) tier, its lane and effort, and the tools
 * it may call: tier policy ∩ what the key may use ∩ the request's list ∩ the agent's list.
 */
export function tierFor(o: {
  classified: Classified;
  keyTools: ToolDef[];
  requested?: string[];
  agent?: {
    tier: AgentTierName;
    lane: PublicLane;
    tools: string[];
    guardrails: { max_steps: number; allow_external: boolean; allow_destructive: boolean };
  };
  maxSteps?: number;
  delegateConfigured: boolean;
  extraTools?: string[];
}): AgentTier {
  const name = o.agent?.tier ?? o.classified.name;
  const policy = TIER_POLICY[name];
  const g = o.agent?.guardrails;
  const tools = o.keyTools
    .filter((t) => (o.agent ? o.agent.tools.includes(t.name) : policy.allows(t)))
    .filter((t) => !g || ((g.allow_external || !t.external) && (g.allow_destructive || !t.destructive)))
    .filter((t) => !o.requested || o.requested.includes(t.name))
    .map((t) => t.name);
  const extra = (o.extraTools ?? []).filter((n) => !o.requested || o.requested.includes(n));
  const stepCap = Math.min(policy.maxSteps, g?.max_steps ?? 32);
  return {
    name,
    lane: o.agent?.lane ?? policy.lane,
    max_steps: Math.min(o.maxSteps ?? stepCap, 32),
    max_tokens: policy.maxTokens,
    tools: [...extra, ...tools],
    delegate: name === 'code' && o.delegateConfigured,
    score: o.classified.score,
    reasons: o.agent ? [`agent definition (${name})`, ...o.classified.reasons] : o.classified.reasons,
  };
}
