import fc from 'fast-check';
import { conversationHarvest as ep, compileConversationHarvest } from '../../reasoning/conversation-harvest';
import { itCompilesGeneratedBodies, expectRejectsAt } from './properties';

const run = (body: unknown) => compileConversationHarvest(ep.request.parse(body), {});

describe('conversation/harvest golden', () => {
  const out = run(ep.example);

  it('extracts the decision traced to its message', () => {
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]).toMatchObject({
      rule: 'lets_go_with',
      source: { message_index: 1, message_id: 'm1', speaker: 'Bob Ruiz' },
    });
  });

  it('extracts owners and resolves due dates against the message time', () => {
    const byOwner = Object.fromEntries(out.commitments.map((c) => [c.owner, c]));
    expect(byOwner['Alice Chen'].action).toBe('draft the announcement by Friday');
    expect(byOwner['Alice Chen'].due).toMatchObject({ hint: 'by Friday', date: '2026-05-01', basis: 'message_time' });
    // "Bob, can you send ...?" + "Sure, tomorrow morning." = Bob's commitment, traced to his reply.
    expect(byOwner['Bob Ruiz']).toMatchObject({
      rule: 'accepted_request',
      accepted_from_index: 3,
      source: { message_index: 4 },
    });
    expect(byOwner['Bob Ruiz'].due?.date).toBe('2026-04-28');
    // Transcript line: named owner by first name, absolute date.
    expect(byOwner['Dana Park']).toMatchObject({ rule: 'named_owner', source: { message_id: 't1', message_index: 6 } });
    expect(byOwner['Dana Park'].due).toMatchObject({ date: '2026-05-01', basis: 'absolute' });
    expect(out.commitments.map((c) => c.id)).toEqual(['c1', 'c2', 'c3']);
  });

  it('keeps only the question nobody answered', () => {
    expect(out.unresolved_threads.map((t) => t.question)).toEqual(['Who owns the support macros for launch week?']);
    expect(out.summary.unresolved_count).toBe(1);
  });

  it('groups follow-up packets per owner, earliest due first', () => {
    expect(out.follow_up_packets[0]).toMatchObject({ owner: 'Bob Ruiz', earliest_due: '2026-04-28T23:59:59-04:00' });
    const dana = out.follow_up_packets.find((p) => p.owner === 'Dana Park')!;
    expect(dana.thread_ids).toEqual(['q1']);
    expect(out.integration_hints.map((h) => h.kind)).toEqual(
      expect.arrayContaining(['task_sync', 'calendar', 'memory']),
    );
  });

  it('leaves relative due dates unresolved without a clock', () => {
    const o = run({ messages: [{ speaker: 'Ann', text: "I'll file the report by Friday." }] });
    expect(o.commitments[0].due).toEqual({ hint: 'by Friday', date: null, at: null, basis: null });
    const o2 = run({
      now: '2026-04-29T10:00:00Z',
      messages: [{ speaker: 'Ann', text: "I'll file the report by Friday." }],
    });
    expect(o2.commitments[0].due).toMatchObject({ date: '2026-05-01', basis: 'request_now' });
  });

  it('handles agreement acknowledgements, negations and open markers', () => {
    const o = run({
      transcript: [
        'Sam: I think we should move the standup to 10am.',
        'Kim: Agreed.',
        "Sam: We haven't decided on the venue yet.",
        'Kim: Venue is TBD until the budget lands.',
      ].join('\n'),
    });
    expect(o.decisions).toHaveLength(1);
    expect(o.decisions[0]).toMatchObject({
      rule: 'agreement',
      confirms_index: 0,
      source: { message_index: 1, speaker: 'Kim' },
    });
    expect(o.unresolved_threads.map((t) => t.source.message_id)).toEqual(['t4']);
  });
});

describe('conversation/harvest request schema', () => {
  it('requires messages or transcript', () => expectRejectsAt(ep.request, { title: 'x' }, 'messages'));
  it('names wrong types', () =>
    expectRejectsAt(ep.request, { messages: [{ speaker: 'a', text: 42 }] }, 'messages.0.text'));
  it('rejects oversize strings and arrays', () => {
    expectRejectsAt(ep.request, { transcript: 'x'.repeat(20_001) }, 'transcript');
    expectRejectsAt(ep.request, { messages: Array.from({ length: 10_001 }, () => ({ text: 'hi' })) }, 'messages');
    expectRejectsAt(ep.request, { messages: [{ text: 'a' }], preferences: { max_items: 0 } }, 'preferences.max_items');
  });
  it('ignores unknown fields', () => {
    const r = ep.request.safeParse({ messages: [{ text: 'a', extra: 1 }], bogus: true });
    expect(r.success && !('bogus' in r.data)).toBe(true);
  });
});

describe('conversation/harvest properties', () => {
  const speaker = fc.constantFrom('Alice', 'Bob', 'Cara Diaz', undefined);
  const phrase = fc.constantFrom(
    "I'll send the deck by Friday.",
    'We decided to use Postgres.',
    'Can you review the draft?',
    'Bob will fix the build tomorrow.',
    'Agreed.',
    'Sure.',
    'What about the budget?',
    'Action: Alice - update the roadmap by 2026-05-01.',
    'Open question: pricing tiers.',
    "Let's go with option B.",
    'in 3 days',
    'end of week',
    'We will ship next week.',
    'Why?',
    'May 31',
    'yes',
    '',
  );
  const text = fc.array(fc.oneof(phrase, fc.string({ maxLength: 40 })), { maxLength: 4 }).map((a) => a.join(' '));
  const time = fc.oneof(
    fc.constant(undefined),
    fc.constant('2026-04-27T09:00:00-04:00'),
    fc.constant('2026-02-28'),
    fc.string({ maxLength: 12 }),
  );
  const message = fc.record(
    { id: fc.option(fc.string({ minLength: 1, maxLength: 6 }), { nil: undefined }), speaker, text, time },
    { requiredKeys: ['text'] },
  );
  const body = fc.record(
    {
      messages: fc.array(message, { minLength: 1, maxLength: 25 }),
      transcript: fc
        .array(
          fc.tuple(speaker, text).map(([s, t]) => (s ? `${s}: ${t}` : t)),
          { maxLength: 6 },
        )
        .map((l) => l.join('\n')),
      participants: fc.array(fc.constantFrom('Alice', 'Bob', 'Cara Diaz', 'Dan'), { maxLength: 4 }),
      now: fc.constantFrom('2026-04-27T12:00:00Z', 'not-a-date'),
      timezone: fc.constantFrom('Europe/Berlin', 'Nowhere/Zone', 'UTC'),
      preferences: fc.record({
        max_items: fc.integer({ min: 1, max: 5 }),
        max_packets: fc.integer({ min: 1, max: 3 }),
        max_seeds: fc.integer({ min: 1, max: 4 }),
      }),
    },
    { requiredKeys: ['messages'] },
  );

  itCompilesGeneratedBodies(
    ep,
    body,
    (input, out) => {
      const p = input.preferences;
      if (p?.max_items)
        for (const l of [out.decisions, out.commitments, out.unresolved_threads])
          expect(l.length).toBeLessThanOrEqual(p.max_items);
      if (p?.max_packets) expect(out.follow_up_packets.length).toBeLessThanOrEqual(p.max_packets);
      if (p?.max_seeds) expect(out.memory_seeds.length).toBeLessThanOrEqual(p.max_seeds);
      const n = out.summary.message_count;
      const ids = new Set(input.messages!.map((m, i) => m.id ?? `m${i}`));
      const lines = (input.transcript ?? '').split(/\r?\n/).length;
      const validId = (id: string, idx: number) =>
        idx < input.messages!.length ? ids.has(id) : /^t(\d+)$/.test(id) && Number(id.slice(1)) <= lines;
      for (const it of [...out.decisions, ...out.commitments, ...out.unresolved_threads]) {
        expect(it.source.message_index).toBeLessThan(n);
        expect(validId(it.source.message_id, it.source.message_index)).toBe(true);
      }
      for (const d of out.decisions)
        if (d.confirms_index !== null) expect(d.confirms_index).toBeLessThan(d.source.message_index);
      for (const c of out.commitments)
        if (c.accepted_from_index !== null) expect(c.accepted_from_index).toBeLessThan(c.source.message_index);
      const cIds = new Set(out.commitments.map((c) => c.id));
      const tIds = new Set(out.unresolved_threads.map((t) => t.id));
      for (const pk of out.follow_up_packets) {
        pk.commitment_ids.forEach((id) => expect(cIds.has(id)).toBe(true));
        pk.thread_ids.forEach((id) => expect(tIds.has(id)).toBe(true));
      }
      const allMsgIds = new Set([...ids, ...out.decisions.map((d) => d.source.message_id)]);
      for (const s of out.memory_seeds)
        for (const id of s.source_message_ids) expect(allMsgIds.has(id) || /^t\d+$/.test(id)).toBe(true);
    },
    80,
  );
});
