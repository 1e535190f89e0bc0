import { parseInstant } from './luxon-time';

/**
 * Text rules behind /conversation/harvest. Each rule works on one sentence (from
 * Intl.Segmenter) so a decision, a commitment and a question in one message are found
 * separately and each traces back to its message.
 */
export interface Msg {
  index: number;
  id: string;
  speaker: string | null;
  text: string;
  time?: string;
}

/** Lower-case full names and first names → canonical participant name (first one wins). */
export function knownNameIndex(participants: string[], msgs: Msg[]): Map<string, string> {
  const idx = new Map<string, string>();
  const add = (name: string) => {
    const n = name.trim();
    if (!n) return;
    const lower = n.toLowerCase();
    if (!idx.has(lower)) idx.set(lower, n);
    const first = lower.split(/\s+/)[0];
    if (first && first !== lower && !idx.has(first)) idx.set(first, n);
  };
  for (const p of participants) add(p);
  for (const m of msgs) if (m.speaker) add(m.speaker);
  for (const bad of ['i', 'we', 'you', 'they', 'he', 'she', 'it', 'someone', 'everyone']) idx.delete(bad);
  return idx;
}

/** Name from the last one or two words of `before` ("then Dana Park" → "Dana Park"). */
function trailingName(before: string, names: Map<string, string>): string | null {
  const words = before
    .trim()
    .replace(/^@/, '')
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => w.replace(/^@/, '').replace(/[,;:]$/, ''));
  if (!words.length) return null;
  const two = words.slice(-2).join(' ').toLowerCase();
  return (words.length >= 2 && names.get(two)) || names.get(words[words.length - 1].toLowerCase()) || null;
}

function leadingName(text: string, names: Map<string, string>): string | null {
  const m = /^@?([A-Za-z][\w'-]*)(?:\s+([A-Za-z][\w'-]*))?/.exec(text.trim());
  if (!m) return null;
  return (m[2] && names.get(`${m[1]} ${m[2]}`.toLowerCase())) || names.get(m[1].toLowerCase()) || null;
}

const cleanAction = (s: string) => s.replace(/[\s.!;,]+$/g, '').trim();

const DECISIONS: [string, RegExp][] = [
  ['decision_label', /^(?:decision|decided|resolution|resolved|agreed)\s*[:\-–]\s*\S/i],
  [
    'decided',
    /\b(?:we|i|they|team|group|everyone|all)\s+(?:have\s+|'ve\s+|all\s+)?(?:decided|agreed|chose|settled|concluded)\b/i,
  ],
  ['lets_go_with', /\blet'?s\s+(?:go\s+with|use|stick\s+with|ship|pick|keep|move\s+forward\s+with)\b/i],
  ['going_with', /\bwe(?:'re|\s+are)\s+(?:going\s+with|going\s+to\s+go\s+with|going\s+ahead\s+with)\b/i],
  ['final_call', /\b(?:final\s+(?:decision|call|answer)|it'?s\s+settled|that'?s\s+settled|decision\s+is)\b/i],
];
const NEGATED = /\b(?:not|n't|never|yet\s+to|undecided)\b[^.]{0,25}\b(?:decided|agreed|settled|chose)\b|\bundecided\b/i;
const ACK =
  /^(?:agreed|deal|sounds\s+good|works\s+for\s+me|let'?s\s+do\s+(?:it|that)|approved|ship\s+it|\+1|yes,?\s+let'?s\s+do\s+(?:it|that)|fine\s+by\s+me|lgtm)[.!\s]*$/i;
const OPEN =
  /\b(?:open\s+question|tbd|to\s+be\s+decided|still\s+need\s+to\s+(?:figure\s+out|decide)|unclear\s+(?:whether|if)|not\s+sure\s+(?:whether|if))\b/i;
const FIRST_PERSON =
  /\b(?:I'll|I\s+will|I\s+am\s+going\s+to|I'm\s+going\s+to|I\s+can\s+take|I\s+promise\s+to|I\s+commit\s+to|let\s+me)\s+(.+)$/i;
const WE = /\bwe(?:'ll|\s+will|\s+are\s+going\s+to|'re\s+going\s+to)\s+(.+)$/i;
const NAMED = /\b(?:will|is\s+going\s+to|'ll)\s+(.+)$/i;
const NAMED_TO = /^(@?[A-Za-z][\w'-]*(?:\s+[A-Za-z][\w'-]*)?)\s+to\s+(.+)$/;
const LABEL = /^(?:action(?:\s+item)?|todo|to-do|follow[- ]up)\s*[:\-–]\s*(.+)$/i;
const REQUEST =
  /^(?:(@?[A-Za-z][\w'-]*(?:\s+[A-Za-z][\w'-]*)?),?\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?(.+?)\?*$/i;
const ANSWER_CUE =
  /^\s*(?:yes|yeah|yep|yup|no|nope|nah|sure|ok(?:ay)?|correct|right|exactly|definitely|probably|maybe|not\s+yet|absolutely|of\s+course|will\s+do|on\s+it|can\s+do|happy\s+to|i\s+think|i'd\s+say|the\s+answer|agreed|done|i'll|i\s+will)\b/i;
const ACCEPT =
  /^\s*(?:sure|yes|yep|yeah|ok(?:ay)?|will\s+do|on\s+it|absolutely|of\s+course|can\s+do|no\s+problem|happy\s+to|i'll|i\s+will)\b/i;

export const harvestRules = {
  isQuestion: (s: string) => /\?["')\]\s]*$/.test(s),
  isOpenMarker: (s: string) => OPEN.test(s),
  isAck: (s: string) => ACK.test(s.trim()),
  isAnswerCue: (s: string) => ANSWER_CUE.test(s),
  isAcceptance: (s: string) => ACCEPT.test(s),

  decision(s: string): string | null {
    if (NEGATED.test(s)) return null;
    for (const [name, re] of DECISIONS) if (re.test(s)) return name;
    return null;
  },

  /** Most recent message within `back` steps from another speaker. */
  previousOtherSpeaker(msgs: Msg[], m: Msg, back: number): Msg | null {
    for (let j = m.index - 1; j >= 0 && j >= m.index - back; j--) {
      if (msgs[j].speaker !== m.speaker || m.speaker === null) return msgs[j];
    }
    return null;
  },

  commitment(
    s: string,
    speaker: string | null,
    names: Map<string, string>,
    isDecision: boolean,
  ): { owner: string; action: string; rule: string } | null {
    const label = LABEL.exec(s);
    if (label) {
      const body = label[1];
      const owner = leadingName(body, names);
      const action = owner ? body.replace(/^@?\S+(?:\s+\S+)??\s*(?:[:\-–]|to|will)\s+/, '') : body;
      return { owner: owner ?? speaker ?? 'unassigned', action: cleanAction(action), rule: 'action_label' };
    }
    const fp = FIRST_PERSON.exec(s);
    if (fp && !/^(?:not|never)\b/i.test(fp[1]) && !/^know\b/i.test(fp[1])) {
      return { owner: speaker ?? 'unknown', action: cleanAction(fp[1]), rule: 'first_person' };
    }
    const to = NAMED_TO.exec(s.trim());
    if (to) {
      const owner = leadingName(to[1], names);
      if (owner) return { owner, action: cleanAction(to[2]), rule: 'named_owner' };
    }
    const named = NAMED.exec(s);
    if (named && named.index > 0) {
      const owner = trailingName(s.slice(0, named.index), names);
      if (owner && !/^(?:not|never)\b/i.test(named[1]))
        return { owner, action: cleanAction(named[1]), rule: 'named_owner' };
    }
    const we = WE.exec(s);
    if (we && !isDecision && !/^(?:not|never|see|need)\b/i.test(we[1])) {
      return { owner: 'team', action: cleanAction(we[1]), rule: 'team' };
    }
    return null;
  },

  /** A request addressed to someone ("Bob, can you send X?") → the requested action. */
  request(s: string): string | null {
    const m = REQUEST.exec(s.trim());
    return m ? cleanAction(m[2].replace(/\?+$/, '')) : null;
  },

  addressee(s: string, names: Map<string, string>): string | null {
    const at = /@([\w'-]+)/.exec(s);
    if (at && names.get(at[1].toLowerCase())) return names.get(at[1].toLowerCase())!;
    const m = /^@?([A-Za-z][\w'-]*(?:\s+[A-Za-z][\w'-]*)?)\s*[,:]/.exec(s.trim());
    return m ? leadingName(m[1], names) : null;
  },
};

/** "Speaker: text" lines (optionally prefixed by "[time]"); other lines continue the previous turn. */
export function parseTranscript(transcript: string, offset: number): Msg[] {
  const out: Msg[] = [];
  const lines = transcript.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    let line = lines[n].replace(/[\u2018\u2019]/g, "'").trim();
    if (!line) continue;
    let time: string | undefined;
    const ts = /^(?:\[([^\]]{1,40})\]|\(([^)]{1,40})\))\s*/.exec(line);
    if (ts) {
      const raw = ts[1] ?? ts[2];
      if (parseInstant(raw)) time = raw;
      line = line.slice(ts[0].length);
    }
    const sp = /^([A-Za-z][^:\n]{0,59}?):\s+(.+)$/.exec(line);
    if (sp && sp[1].split(/\s+/).length <= 5) {
      out.push({ index: offset + out.length, id: `t${n + 1}`, speaker: sp[1].trim(), text: sp[2], time });
    } else if (out.length) {
      out[out.length - 1].text += ` ${line}`;
    } else {
      out.push({ index: offset, id: `t${n + 1}`, speaker: null, text: line, time });
    }
  }
  return out;
}
