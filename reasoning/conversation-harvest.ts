import { defineReasoning } from './types';
import {
  conversationHarvestRequest,
  conversationHarvestResponse,
  type ConversationHarvestRequest,
  type ConversationHarvestResponse,
} from '../schema/reasoning/conversation-harvest';
import { clip, keywordSet, keywordSetEach, splitSentences, splitSentencesEach } from './lib/text-segments';
import { parseInstant, resolveZone } from './lib/luxon-time';
import { extractDueHint, resolveDue } from './lib/due-hints';
import { buildPackets, buildSeeds } from './lib/harvest-packets';
import { harvestRules as R, knownNameIndex, parseTranscript, type Msg } from './lib/harvest-rules';

type Out = ConversationHarvestResponse;
type Decision = Out['decisions'][number];
type Commitment = Out['commitments'][number];
type Thread = Out['unresolved_threads'][number];

/** Messages after a question that may answer it (bounded so the scan stays O(n)). */
const ANSWER_WINDOW = 6;

export function compileConversationHarvest(input: ConversationHarvestRequest, _ctx: { surface?: string } = {}): Out {
  const tz = resolveZone(input.timezone);
  const now = parseInstant(input.now, tz);
  const msgs: Msg[] = (input.messages ?? []).map((m, i) => ({
    index: i,
    id: m.id ?? `m${i}`,
    speaker: m.speaker?.trim() || null,
    text: m.text.replace(/[\u2018\u2019]/g, "'"),
    time: m.time,
  }));
  if (input.transcript) msgs.push(...parseTranscript(input.transcript, msgs.length));
  const names = knownNameIndex(input.participants ?? [], msgs);
  const src = (m: Msg) => ({ message_index: m.index, message_id: m.id, speaker: m.speaker });

  const decisions: Decision[] = [];
  const commitments: Commitment[] = [];
  const questions: { msg: Msg; text: string; kw: string[]; to: string | null; answered: boolean }[] = [];
  const kwOf: Set<string>[] = [];
  const hasStatement: boolean[] = [];
  const decisionIdx = new Map<string, number[]>();
  const df = new Map<string, { n: number; ids: string[] }>();
  const decidedMsgs = new Set<number>();

  // Sentences and keywords of the messages come from one segmenter pass per chunk of messages
  // (a segment() call per message made large conversations GC-bound).
  const CHUNK = 256;
  let chunkSentences: string[][] = [];
  let chunkKeywords: string[][] = [];
  for (const m of msgs) {
    const at = m.index % CHUNK;
    if (at === 0 || !chunkSentences.length) {
      const texts = msgs.slice(m.index - at, m.index - at + CHUNK).map((x) => x.text);
      chunkSentences = splitSentencesEach(texts);
      chunkKeywords = keywordSetEach(texts);
    }
    const sentences = chunkSentences[at];
    const kws = new Set(chunkKeywords[at]);
    kwOf.push(kws);
    for (const w of kws) {
      const e = df.get(w) ?? { n: 0, ids: [] };
      e.n++;
      if (e.ids.length < 3) e.ids.push(m.id);
      df.set(w, e);
    }
    const own = parseInstant(m.time, tz);
    const base = own ?? now;
    const basis = own ? 'message_time' : 'request_now';
    let statement = false;
    for (const s of sentences) {
      const q = R.isQuestion(s);
      if (!q) statement = true;
      if (q || R.isOpenMarker(s)) {
        const kw = keywordSet(s);
        if (kw.length) questions.push({ msg: m, text: s, kw, to: R.addressee(s, names), answered: false });
      }
      if (q) continue;
      const d = R.decision(s);
      if (d) {
        decisions.push({
          id: `d${decisions.length + 1}`,
          text: clip(s, 240),
          rule: d,
          source: src(m),
          confirms_index: null,
        });
      } else if (R.isAck(s)) {
        const prev = R.previousOtherSpeaker(msgs, m, 3);
        if (prev && !decidedMsgs.has(prev.index)) {
          const ps = splitSentences(prev.text).filter((x) => !R.isQuestion(x));
          const text = ps.length ? ps[ps.length - 1] : prev.text;
          decisions.push({
            id: `d${decisions.length + 1}`,
            text: clip(`${text} (agreed by ${m.speaker ?? 'participant'})`, 240),
            rule: 'agreement',
            source: src(m),
            confirms_index: prev.index,
          });
        }
      }
      const c = R.commitment(s, m.speaker, names, !!d);
      if (c) {
        const h = extractDueHint(s);
        commitments.push({
          id: `c${commitments.length + 1}`,
          owner: c.owner,
          action: clip(c.action, 200),
          due: h ? resolveDue(h, base, basis, tz) : null,
          rule: c.rule,
          source: src(m),
          accepted_from_index: null,
        });
      }
    }
    hasStatement.push(statement);
    if (decisions.length && decisions[decisions.length - 1].source.message_index === m.index) {
      decidedMsgs.add(m.index);
      for (const w of kws) {
        const list = decisionIdx.get(w) ?? [];
        if (list[list.length - 1] !== m.index) list.push(m.index);
        decisionIdx.set(w, list);
      }
    }
  }

  // Questions: answered by an accepted request, a nearby reply, or a later decision on the same keywords.
  for (const q of questions) {
    const i = q.msg.index;
    let firstOther = true;
    const need = Math.max(1, Math.ceil(q.kw.length / 3));
    for (let j = i + 1; j < msgs.length && j <= i + ANSWER_WINDOW && !q.answered; j++) {
      const r = msgs[j];
      if (r.speaker !== null && r.speaker === q.msg.speaker) continue;
      if (firstOther) {
        firstOther = false;
        if (R.isAnswerCue(r.text)) {
          q.answered = true;
          const req = R.request(q.text);
          if (
            req &&
            R.isAcceptance(r.text) &&
            (!q.to || !r.speaker || q.to.toLowerCase() === r.speaker.toLowerCase())
          ) {
            const h = extractDueHint(q.text) ?? extractDueHint(r.text);
            const base = parseInstant(r.time, tz) ?? now;
            commitments.push({
              id: `c${commitments.length + 1}`,
              owner: r.speaker ?? q.to ?? 'unknown',
              action: clip(req, 200),
              due: h ? resolveDue(h, base, parseInstant(r.time, tz) ? 'message_time' : 'request_now', tz) : null,
              rule: 'accepted_request',
              source: src(r),
              accepted_from_index: i,
            });
          }
          break;
        }
      }
      if (!hasStatement[j]) continue;
      let hit = 0;
      for (const w of q.kw) if (kwOf[j].has(w)) hit++;
      if (hit >= need) q.answered = true;
    }
    if (q.answered) continue;
    const tally = new Map<number, number>();
    for (const w of q.kw) {
      const list = decisionIdx.get(w);
      if (!list) continue;
      let k = lowerBound(list, i + 1);
      for (let c = 0; k < list.length && c < 20; k++, c++) tally.set(list[k], (tally.get(list[k]) ?? 0) + 1);
    }
    const need2 = Math.min(2, q.kw.length);
    for (const v of tally.values()) if (v >= need2) q.answered = true;
  }

  const cap = input.preferences?.max_items ?? 50;
  const open = questions.filter((q) => !q.answered);
  // Accepted requests are found after the main pass: restore message order, then number.
  commitments.forEach((c, k) => (c.id = String(k)));
  commitments.sort((a, b) => a.source.message_index - b.source.message_index || Number(a.id) - Number(b.id));
  commitments.forEach((c, k) => (c.id = `c${k + 1}`));
  const outDecisions = decisions.slice(0, cap);
  const outCommitments = commitments.slice(0, cap);
  const threads: Thread[] = open.slice(0, cap).map((q, k) => ({
    id: `q${k + 1}`,
    question: clip(q.text, 240),
    asked_by: q.msg.speaker,
    addressed_to: q.to,
    keywords: q.kw.slice(0, 6),
    messages_since: msgs.length - 1 - q.msg.index,
    source: src(q.msg),
  }));

  const packets = buildPackets(outCommitments, threads, input.preferences?.max_packets ?? 5);
  const seeds = buildSeeds(outDecisions, df, msgs.length, input.preferences?.max_seeds ?? 8);
  const speakers = [...new Set(msgs.map((m) => m.speaker).filter((s): s is string => !!s))].slice(0, 200);
  const title =
    input.title?.trim() ||
    input.intent?.trim() ||
    (speakers.length ? `Conversation with ${speakers.slice(0, 3).join(', ')}` : 'Conversation');

  const hints: Out['integration_hints'] = [];
  if (outCommitments.length)
    hints.push({
      kind: 'task_sync',
      target: 'tasks',
      detail: `Create ${outCommitments.length} owned task(s) from commitments; keep source.message_id for traceability.`,
    });
  const dated = outCommitments.filter((c) => c.due?.at).length;
  if (dated)
    hints.push({
      kind: 'calendar',
      target: 'reminders',
      detail: `${dated} commitment(s) have a resolved due date; schedule reminders before due.at.`,
    });
  if (threads.length)
    hints.push({
      kind: 'thread',
      target: 'chat',
      detail: `Post ${threads.length} open question(s) back to the thread or the follow-up packets.`,
    });
  if (seeds.length)
    hints.push({
      kind: 'memory',
      target: 'memory',
      detail: `Store ${seeds.length} memory seed(s) tagged with the conversation title.`,
    });
  for (const link of (input.context_links ?? []).slice(0, 3))
    hints.push({ kind: 'context_link', target: clip(link, 200), detail: 'Attach the harvest to this linked context.' });

  return {
    summary: {
      title: clip(title, 120),
      message_count: msgs.length,
      speakers,
      decision_count: decisions.length,
      commitment_count: commitments.length,
      unresolved_count: open.length,
      truncated: decisions.length > cap || commitments.length > cap || open.length > cap,
    },
    decisions: outDecisions,
    commitments: outCommitments,
    unresolved_threads: threads,
    follow_up_packets: packets,
    memory_seeds: seeds,
    integration_hints: hints,
  };
}

function lowerBound(a: number[], v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export const conversationHarvest = defineReasoning({
  path: '/conversation/harvest',
  summary:
    'Harvest decisions, owned commitments with due dates, unresolved questions, follow-up packets and memory seeds from a conversation.',
  request: conversationHarvestRequest,
  response: conversationHarvestResponse,
  compile: compileConversationHarvest,
  example: {
    surface: 'chat',
    title: 'Launch sync',
    intent: 'meeting follow-up',
    participants: ['Alice Chen', 'Bob Ruiz', 'Dana Park'],
    now: '2026-04-27T09:00:00-04:00',
    timezone: 'America/New_York',
    messages: [
      {
        speaker: 'Alice Chen',
        text: 'Should we launch on web first or mobile first?',
        time: '2026-04-27T09:01:00-04:00',
      },
      {
        speaker: 'Bob Ruiz',
        text: "Web first. The mobile build still fails review. Let's go with a web launch on May 4.",
        time: '2026-04-27T09:03:00-04:00',
      },
      {
        speaker: 'Alice Chen',
        text: "Agreed. I'll draft the announcement by Friday.",
        time: '2026-04-27T09:04:00-04:00',
      },
      {
        speaker: 'Dana Park',
        text: 'Bob, can you send the pricing sheet to legal?',
        time: '2026-04-27T09:06:00-04:00',
      },
      { speaker: 'Bob Ruiz', text: 'Sure, tomorrow morning.', time: '2026-04-27T09:07:00-04:00' },
      { speaker: 'Dana Park', text: 'Who owns the support macros for launch week?', time: '2026-04-27T09:09:00-04:00' },
    ],
    transcript: 'Dana Park: Dana will update the status page by 2026-05-01.',
    context_links: ['https://tracker.example.com/launch-42'],
  },
});
