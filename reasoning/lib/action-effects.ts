/**
 * Effect classification for planned actions: word rules over the title, tool and declared
 * effects decide whether an action reads, writes, touches a customer, moves money or destroys
 * something. Approval policies are keyed on these classes.
 */
const WRITE = new Set(
  'create update write send post publish submit upload delete remove modify edit charge refund pay transfer book schedule cancel email message notify reply invite share insert set change assign close merge deploy'.split(
    ' ',
  ),
);
const CONTACT = new Set('email sms message notify call reply invite text mail dm'.split(' '));
const PEOPLE = new Set(
  'customer customers client clients buyer buyers patient patients recipient recipients subscriber subscribers user users'.split(
    ' ',
  ),
);
const DELIVER = new Set('send share post deliver forward publish'.split(' '));
const MONEY_VERB = new Set('pay charge refund purchase buy transfer payout wire checkout bill'.split(' '));
const MONEY_NOUN = new Set('payment payments invoice invoices billing price subscription money card'.split(' '));
const READ_VERB = new Set(
  'read look lookup fetch get list search query view check find summarize inspect review preview'.split(' '),
);
const DESTRUCT = new Set(
  'delete remove drop purge wipe erase destroy cancel revoke overwrite truncate terminate'.split(' '),
);

export type EffectClass = 'read' | 'write' | 'external_write' | 'customer_touch' | 'money' | 'destructive';

export interface EffectInput {
  title: string;
  tool?: string;
  effects?: string[];
  destructive?: boolean;
  external?: boolean;
}

const canon = (s: string) =>
  s
    .toLowerCase()
    .trim()
    .replace(/[\s-]+/g, '_');

/** Effect classes of an action, in a fixed order, plus its declared effects as canonical labels. */
export function classifyEffects(
  a: EffectInput,
  /** splitWords of the title and the tool (the caller segments many actions at once, see splitWordsEach). */
  pre: { titleWords: string[]; toolWords: string[] },
): { classes: EffectClass[]; declared: string[] } {
  const declared = [...new Set((a.effects ?? []).map(canon).filter(Boolean))];
  const { titleWords } = pre;
  const words = new Set([...titleWords, ...pre.toolWords, ...declared.flatMap((d) => d.split('_'))]);
  const has = (set: Set<string>) => [...words].some((w) => set.has(w));
  const declaredWrite = declared.some(
    (d) => d.includes('write') || d === 'money' || d === 'destructive' || d === 'customer_touch',
  );
  // "Look up the invoice", "Check payment status": a leading read verb keeps the action a read.
  const readLed = READ_VERB.has(titleWords[0] ?? '') && !declaredWrite && !a.destructive;
  const destructive = !!a.destructive || declared.includes('destructive') || (!readLed && has(DESTRUCT));
  const write = destructive || declaredWrite || (!readLed && (has(WRITE) || has(MONEY_VERB)));
  const money = declared.includes('money') || (write && (has(MONEY_VERB) || has(MONEY_NOUN)));
  // Contacting someone, or delivering something to a person, touches the customer; editing their records does not.
  const customer = declared.includes('customer_touch') || (write && (has(CONTACT) || (has(DELIVER) && has(PEOPLE))));
  const external = declared.includes('external_write') || (!!a.external && write);
  const classes: EffectClass[] = [write ? 'write' : 'read'];
  if (external) classes.push('external_write');
  if (customer) classes.push('customer_touch');
  if (money) classes.push('money');
  if (destructive) classes.push('destructive');
  return { classes, declared };
}

/** Words a constraint forbids: "no email", "never delete", "avoid acme", "do not charge". */
export function forbiddenWords(constraints: readonly string[]): Set<string> {
  const out = new Set<string>();
  const re =
    /\b(?:no|never|avoid|without|don't|dont|do not|must not|not)\s+(?:use\s+|using\s+|any\s+)?([a-z0-9][a-z0-9_.-]{1,40})/gi;
  for (const c of constraints) for (const m of c.matchAll(re)) out.add(m[1].toLowerCase());
  return out;
}

const SENSITIVE =
  /pass(word)?|secret|token|api[_ ]?key|ssn|social security|card|iban|account[_ ]?number|birth|dob|pin\b/i;

/** Inputs an audit record must redact. */
export const sensitiveInputs = (inputs: readonly string[]): string[] => inputs.filter((i) => SENSITIVE.test(i));
