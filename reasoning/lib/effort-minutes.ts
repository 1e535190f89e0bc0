/**
 * Effort estimates from free text: an explicit duration ("20 min", "1.5h", "2 hours") wins;
 * otherwise the estimate grows with the amount of text, within [min, max].
 */
const DURATION = /(\d+(?:\.\d+)?)\s*(minutes?|mins?|m|hours?|hrs?|h)\b/i;

export function explicitMinutes(text: string): number | null {
  const m = DURATION.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  const minutes = /^h/i.test(m[2]) ? n * 60 : n;
  return Number.isFinite(minutes) && minutes > 0 ? Math.min(Math.round(minutes), 24 * 60) : null;
}

export function estimateMinutes(text: string, opts: { min?: number; max?: number; base?: number } = {}): number {
  const explicit = explicitMinutes(text);
  if (explicit !== null) return explicit;
  const words = text.split(/\s+/).filter(Boolean).length;
  const est = (opts.base ?? 10) + Math.round(words * 0.8);
  return Math.max(opts.min ?? 5, Math.min(opts.max ?? 60, est));
}

const HEAVY = /\b(write|draft|build|design|implement|plan|analy[sz]e|research|refactor|debug|prepare|create|study)\b/i;
const LIGHT = /\b(read|review|check|list|email|reply|call|tidy|file|schedule|book|buy|open|skim|collect|gather)\b/i;

/** Cognitive load of a step: light admin work fits low energy, deep work needs high. */
export function energyFit(text: string, minutes: number): 'low' | 'medium' | 'high' {
  if (HEAVY.test(text) && minutes > 15) return 'high';
  if (LIGHT.test(text) || minutes <= 10) return 'low';
  return HEAVY.test(text) ? 'medium' : 'medium';
}

export function normalizeEnergy(value: string | undefined | null): 'low' | 'medium' | 'high' {
  const v = (value ?? '').toLowerCase();
  if (/low|tired|drained|exhausted|depleted/.test(v)) return 'low';
  if (/high|energi[sz]ed|fresh|peak|great/.test(v)) return 'high';
  return 'medium';
}
