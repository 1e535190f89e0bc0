import { randomBytes } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { FAKE_PNG_B64, type FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors, postResponseStream, readResponseEvents, streamEventErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { fields, type Harness } from '../helpers/harness';
import { startExtraApp } from '../helpers/extra-app';

// OpenAI's image_generation tool of the Responses API over a persona lane: the lane asks for an image through a
// function, the service makes it with the images lane (a fake OpenAI-compatible upstream here) and answers with an
// image_generation_call item holding the image, then the lane answers on.

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;

withFakeUpstream({ scopes: ['runtime:chat'], resetEach: {} }, (up) => {
  ({ fake, h, key } = up);
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});

const post = (body: unknown) => h.req('POST', '/v1/responses', { key, body });
const chats = () => fake.requests.filter((r) => r.path.endsWith('/chat/completions'));
const imageRequests = () => fake.requests.filter((r) => r.path.endsWith('/images/generations'));
const drawFox = {
  toolCalls: [{ id: 'call_i1', name: 'image_generation', arguments: { prompt: 'A red fox in snow' } }],
};

describe('the image_generation tool', () => {
  test('the lane’s call makes an image with the images lane: an image_generation_call in the contract, then the answer', async () => {
    // The lane calls the tool; the images lane makes the image (the fake's PNG); the lane answers with the result.
    fake.script(
      { ...drawFox, usage: { prompt_tokens: 12, completion_tokens: 6 } },
      {},
      { reply: 'Here is your fox.', usage: { prompt_tokens: 30, completion_tokens: 5 } },
    );
    const res = await client.responses.create({
      model: 'svc-oracle',
      input: 'Draw me a fox.',
      tools: [{ type: 'image_generation', quality: 'high' }],
    });
    expect(contractErrors('Response', res)).toEqual([]);
    expect(res.output.map((o) => o.type)).toEqual(['image_generation_call', 'message']);
    const call = res.output[0] as any;
    expect(call).toEqual({
      type: 'image_generation_call',
      id: expect.stringMatching(/^ig_/),
      status: 'completed',
      result: FAKE_PNG_B64,
      revised_prompt: 'fake: A red fox in snow',
      size: 'auto',
      quality: 'high',
      background: 'auto',
      output_format: 'png',
    });
    expect(res.output_text).toBe('Here is your fox.');
    expect(res.usage).toMatchObject({ input_tokens: 42, output_tokens: 11 });
    // The tool is echoed with OpenAI's defaults.
    expect(res.tools[0]).toMatchObject({
      type: 'image_generation',
      quality: 'high',
      size: 'auto',
      output_format: 'png',
      partial_images: 0,
    });

    // The lane was offered a function of one prompt, and the images lane was asked for the prompt the lane wrote.
    const [first, second] = chats();
    const fn = first.body.tools.find((t: any) => t.function.name === 'image_generation').function;
    expect(fn.parameters).toMatchObject({ required: ['prompt'], properties: { prompt: { type: 'string' } } });
    expect(imageRequests()).toHaveLength(1);
    expect(imageRequests()[0].body).toMatchObject({
      prompt: 'A red fox in snow',
      n: 1,
      quality: 'high',
      response_format: 'b64_json',
    });
    // The lane hears that the image was made, never its bytes.
    const [asked, answer] = second.body.messages.slice(-2);
    expect(asked).toMatchObject({ role: 'assistant', tool_calls: [{ function: { name: 'image_generation' } }] });
    expect(answer).toMatchObject({ role: 'tool', tool_call_id: asked.tool_calls[0].id });
    expect(answer.content).toMatch(/made and shown to the user/);
    expect(JSON.stringify(second.body)).not.toContain(FAKE_PNG_B64);

    // GET gives the same item.
    const got = await client.responses.retrieve(res.id);
    expect(got.output[0]).toEqual(call);
  });

  test('streamed: added, in_progress, generating, partial_image, completed, done — every event in the contract', async () => {
    fake.script(drawFox, {}, { reply: 'Done.' });
    const events = await readResponseEvents(
      await postResponseStream(h.url, key, {
        input: 'Draw me a fox.',
        tools: [{ type: 'image_generation', partial_images: 2 }],
      }),
    );
    for (const e of events) expect(streamEventErrors(e.data)).toEqual([]);
    const mine = events.filter(
      (e) => e.data.item_id?.startsWith('ig_') || e.data.item?.type === 'image_generation_call',
    );
    expect(mine.map((e) => e.event)).toEqual([
      'response.output_item.added',
      'response.image_generation_call.in_progress',
      'response.image_generation_call.generating',
      'response.image_generation_call.partial_image',
      'response.image_generation_call.completed',
      'response.output_item.done',
    ]);
    expect(mine[0].data.item).toMatchObject({ status: 'in_progress', result: null });
    expect(mine[3].data).toMatchObject({
      partial_image_index: 0,
      partial_image_b64: FAKE_PNG_B64,
      output_format: 'png',
    });
    expect(mine[5].data.item).toMatchObject({ status: 'completed', result: FAKE_PNG_B64 });
    const done = events.at(-1)!;
    expect(done.event).toBe('response.completed');
    expect(done.data.response.output.map((o: any) => o.type)).toEqual(['image_generation_call', 'message']);
    expect(done.data.response.output[1].content[0].text).toBe('Done.');
    // Without partial_images, no partial image event.
    fake.script(drawFox, {}, { reply: 'Done.' });
    const plain = await readResponseEvents(
      await postResponseStream(h.url, key, { input: 'Again.', tools: [{ type: 'image_generation' }] }),
    );
    expect(plain.map((e) => e.event)).not.toContain('response.image_generation_call.partial_image');
    expect(plain.map((e) => e.event)).toContain('response.image_generation_call.completed');
  });

  test('a client that leaves while the image is being made ends the images lane’s call', async () => {
    fake.script(drawFox, { hang: true });
    const abort = new AbortController();
    const res = await fetch(`${h.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'Draw a fox.', stream: true, tools: [{ type: 'image_generation' }] }),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('response.image_generation_call.generating')) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    await fake.waitFor(() => imageRequests().length === 1);
    abort.abort();
    await fake.waitFor(() => imageRequests()[0].closedEarly, 5000);
  });

  test('output_format and output_compression: the image is written as asked (jpeg, webp)', async () => {
    fake.script(drawFox, {}, { reply: 'ok' });
    const jpeg = await client.responses.create({
      input: 'Draw me a fox.',
      tools: [{ type: 'image_generation', output_format: 'jpeg', output_compression: 40 }],
    });
    const j = jpeg.output[0] as any;
    expect(j.output_format).toBe('jpeg');
    expect((await sharp(Buffer.from(j.result, 'base64')).metadata()).format).toBe('jpeg');

    fake.script(drawFox, {}, { reply: 'ok' });
    const webp = await client.responses.create({
      input: 'Draw me a fox.',
      tools: [{ type: 'image_generation', output_format: 'webp', background: 'transparent' }],
    });
    const w = webp.output[0] as any;
    expect((await sharp(Buffer.from(w.result, 'base64')).metadata()).format).toBe('webp');
    // A transparent background is asked of the images lane.
    expect(imageRequests().at(-1)!.body).toMatchObject({ background: 'transparent' });
  });

  test('a failure of the images lane is the call’s: failed, no image, and the lane is told why', async () => {
    fake.script(drawFox, { status: 500 }, { reply: 'Sorry, the image could not be made.' });
    const res = await client.responses.create({ input: 'Draw me a fox.', tools: [{ type: 'image_generation' }] });
    expect(contractErrors('Response', res)).toEqual([]);
    expect(res.status).toBe('completed');
    expect(res.output[0]).toMatchObject({ type: 'image_generation_call', status: 'failed', result: null });
    expect(res.output_text).toBe('Sorry, the image could not be made.');
    const answer = chats().at(-1)!.body.messages.at(-1);
    expect(answer.role).toBe('tool');
    expect(answer.content).toMatch(/^The image could not be made: .+/);
  });

  test('a call with no prompt makes no image; a plain-text argument is taken as the prompt', async () => {
    fake.script(
      { toolCalls: [{ id: 'c1', name: 'image_generation', arguments: { prompt: '  ' } }] },
      { reply: 'I need a description.' },
    );
    const res = await client.responses.create({ input: 'Draw.', tools: [{ type: 'image_generation' }] });
    expect(res.output[0]).toMatchObject({ status: 'failed', result: null });
    expect(imageRequests()).toHaveLength(0);
    expect(chats().at(-1)!.body.messages.at(-1).content).toBe('The image could not be made: the call gave no prompt.');

    fake.script(
      { toolCalls: [{ id: 'c2', name: 'image_generation', arguments: 'a blue whale' }] },
      {},
      { reply: 'ok' },
    );
    const plain = await client.responses.create({ input: 'Draw.', tools: [{ type: 'image_generation' }] });
    expect(plain.output[0]).toMatchObject({ status: 'completed', revised_prompt: 'fake: a blue whale' });
    expect(imageRequests().at(-1)!.body.prompt).toBe('a blue whale');
  });

  test('prompts with NUL or a lone surrogate (raw or as JSON escapes) are made storable: answered and stored', async () => {
    for (const args of ['a fox \u0000 in \ud800 snow', JSON.stringify({ prompt: 'a fox \u0000 in \ud800 snow' })]) {
      fake.script({ toolCalls: [{ id: 'c1', name: 'image_generation', arguments: args }] }, {}, { reply: 'ok' });
      const res = await post({ input: 'Draw.', tools: [{ type: 'image_generation' }] });
      expect(res.status).toBe(200);
      expect(res.body.output[0]).toMatchObject({ type: 'image_generation_call', status: 'completed' });
      expect(res.body.output[0].revised_prompt).toBe('fake: a fox \ufffd in \ufffd snow');
      expect((await h.req('GET', `/v1/responses/${res.body.id}`, { key })).status).toBe(200);
    }
  });

  test('tool_choice image_generation forces the call; max_tool_calls bounds the images made', async () => {
    fake.script(
      {
        toolCalls: [
          { id: 'c1', name: 'image_generation', arguments: { prompt: 'one' } },
          { id: 'c2', name: 'image_generation', arguments: { prompt: 'two' } },
        ],
      },
      {},
      { reply: 'One of two.' },
    );
    const res = (
      await post({
        input: 'Two pictures.',
        tools: [{ type: 'image_generation' }],
        tool_choice: { type: 'image_generation' },
        max_tool_calls: 1,
      })
    ).body;
    expect(contractErrors('Response', res)).toEqual([]);
    expect(chats()[0].body.tool_choice).toEqual({ type: 'function', function: { name: 'image_generation' } });
    expect(res.output.map((o: any) => [o.type, o.status])).toEqual([
      ['image_generation_call', 'completed'],
      ['image_generation_call', 'failed'],
      ['message', 'completed'],
    ]);
    expect(imageRequests()).toHaveLength(1);
    // The budget spent, the lane may call no tool; it hears the second call was not made.
    const next = chats()[1].body;
    expect(next.tool_choice).toBe('none');
    expect(next.messages.at(-1).content).toMatch(
      /could not be made: the response ended, or spent its tool call budget/,
    );
  });

  test('a continued response gives the lane the earlier call (its prompt, not its image); the item can be sent back', async () => {
    fake.script(drawFox, {}, { reply: 'A fox.' });
    const first = await client.responses.create({ input: 'Draw a fox.', tools: [{ type: 'image_generation' }] });
    fake.script({ reply: 'A bluer fox coming up.' });
    await client.responses.create({
      input: 'Make it bluer.',
      previous_response_id: first.id,
      tools: [{ type: 'image_generation' }],
    });
    const sent = chats().at(-1)!.body;
    expect(sent.messages.slice(1).map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(JSON.parse(sent.messages[2].tool_calls[0].function.arguments)).toEqual({
      prompt: 'fake: A red fox in snow',
    });
    expect(JSON.stringify(sent)).not.toContain(FAKE_PNG_B64);

    // A client that resends its history (as the Agents SDK does) sends the item itself back.
    fake.script({ reply: 'Still a fox.' });
    const res = await client.responses.create({
      input: [
        { role: 'user', content: 'Draw a fox.' },
        first.output[0] as any,
        { role: 'user', content: 'Is it a fox?' },
      ],
    });
    expect(res.status).toBe('completed');
    const again = chats().at(-1)!.body.messages.slice(1);
    expect(again.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(again[1].tool_calls[0].function.name).toBe('image_generation');
  });

  test('made images do not count toward SVC_CHAT_BODY_LIMIT (no lane reads them): a chain and a conversation go on', async () => {
    // A 60 KB image against a 40 KB limit on what a request may send a lane.
    const noise = randomBytes(120 * 120 * 3);
    const big = (
      await sharp(noise, { raw: { width: 120, height: 120, channels: 3 } })
        .png()
        .toBuffer()
    ).toString('base64');
    expect(big.length).toBeGreaterThan(40_000);
    const app = await startExtraApp(h, { config: { chatBodyLimit: 40_000 } });
    const send = (body: unknown) =>
      fetch(`${app.url}/v1/${body && (body as any).items ? 'conversations' : 'responses'}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    try {
      fake.script(drawFox, { reply: big }, { reply: 'A fox.' });
      const first = await send({ input: 'Draw a fox.', tools: [{ type: 'image_generation' }] });
      expect(first.body.output[0].result).toBe(big);
      fake.script({ reply: 'Still a fox.' });
      const next = await send({ input: 'And now?', previous_response_id: first.body.id });
      expect([next.status, next.body.output_text ?? next.body.output?.[0]?.content?.[0]?.text]).toEqual([
        200,
        'Still a fox.',
      ]);

      const conv = await send({ items: [] });
      fake.script(drawFox, { reply: big }, { reply: 'A fox.' });
      expect(
        (await send({ input: 'Draw.', conversation: conv.body.id, tools: [{ type: 'image_generation' }] })).status,
      ).toBe(200);
      fake.script({ reply: 'Yes.' });
      expect((await send({ input: 'Done?', conversation: conv.body.id })).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  describe('edits: the latest image of the conversation, changed with the images lane', () => {
    const edits = () => fake.requests.filter((r) => r.path.endsWith('/images/edits'));
    /** A user message with an inline PNG, as a client sends it. */
    const userWithImage = (text: string, b64: string) => ({
      role: 'user' as const,
      content: [
        { type: 'input_text' as const, text },
        { type: 'input_image' as const, image_url: `data:image/png;base64,${b64}`, detail: 'auto' as const },
      ],
    });
    const redPng = async () =>
      (
        await sharp({ create: { width: 8, height: 8, channels: 3, background: '#ff0000' } })
          .png()
          .toBuffer()
      ).toString('base64');

    test('auto: the model asks for an edit of the image it made; the next round edits the image that edit made', async () => {
      fake.script(drawFox, {}, { reply: 'A fox.' });
      const first = await client.responses.create({ input: 'Draw a fox.', tools: [{ type: 'image_generation' }] });
      const fn = chats()[0].body.tools.find((t: any) => t.function.name === 'image_generation').function;
      expect(Object.keys(fn.parameters.properties)).toEqual(['prompt', 'edit']);

      const blue = sharp({ create: { width: 4, height: 4, channels: 3, background: '#0000ff' } });
      const blueB64 = (await blue.png().toBuffer()).toString('base64');
      fake.script(
        { toolCalls: [{ id: 'e1', name: 'image_generation', arguments: { prompt: 'Make the fox blue', edit: true } }] },
        { reply: blueB64 },
        { toolCalls: [{ id: 'e2', name: 'image_generation', arguments: { prompt: 'Add a hat', edit: true } }] },
        {},
        { reply: 'A blue fox in a hat.' },
      );
      const res = await client.responses.create({
        input: 'Make it blue, then give it a hat.',
        previous_response_id: first.id,
        tools: [{ type: 'image_generation' }],
      });
      expect(contractErrors('Response', res)).toEqual([]);
      expect(res.output.map((o: any) => [o.type, o.status])).toEqual([
        ['image_generation_call', 'completed'],
        ['image_generation_call', 'completed'],
        ['message', 'completed'],
      ]);
      expect((res.output[0] as any).result).toBe(blueB64);
      expect(imageRequests()).toHaveLength(1);
      expect(edits()).toHaveLength(2);
      const [one, two] = edits().map((r) => r.body);
      expect(one).toMatchObject({ prompt: 'Make the fox blue', n: '1', response_format: 'b64_json' });
      expect(one.files).toEqual([expect.objectContaining({ field: 'image', type: 'image/png' })]);
      // Each edit sent the image as it was (inline PNGs are not re-encoded): the fox first, then the first edit's result.
      expect(one.files[0].bytes.equals(Buffer.from(FAKE_PNG_B64, 'base64'))).toBe(true);
      expect(two.files[0].bytes.equals(Buffer.from(blueB64, 'base64'))).toBe(true);
      expect(two.prompt).toBe('Add a hat');
    });

    test('the user’s own image is the one edited; with none, the call fails and the lane is told', async () => {
      const red = await redPng();
      fake.script(
        { toolCalls: [{ id: 'e1', name: 'image_generation', arguments: { prompt: 'Turn it green', edit: true } }] },
        {},
        { reply: 'Green now.' },
      );
      const res = await client.responses.create({
        input: [userWithImage('Make this green.', red)],
        tools: [{ type: 'image_generation' }],
      });
      expect(res.output[0]).toMatchObject({ type: 'image_generation_call', status: 'completed' });
      expect(edits()).toHaveLength(1);
      // The user's PNG, as they gave it.
      expect(edits()[0].body.files[0]).toMatchObject({ field: 'image', type: 'image/png' });
      expect(edits()[0].body.files[0].bytes.equals(Buffer.from(red, 'base64'))).toBe(true);

      fake.script(
        { toolCalls: [{ id: 'e2', name: 'image_generation', arguments: { prompt: 'Turn it green', edit: true } }] },
        { reply: 'There was nothing to edit.' },
      );
      const none = await client.responses.create({ input: 'Make it green.', tools: [{ type: 'image_generation' }] });
      expect(none.output[0]).toMatchObject({ status: 'failed', result: null });
      expect(edits()).toHaveLength(1);
      expect(chats().at(-1)!.body.messages.at(-1).content).toMatch(/no image in the conversation to edit/);
    });

    test('an image call sent back without its result is not skipped for an older image: the edit fails, saying why', async () => {
      const red = await redPng();
      fake.script(
        { toolCalls: [{ id: 'e1', name: 'image_generation', arguments: { prompt: 'Bluer', edit: true } }] },
        { reply: 'I cannot see that image any more.' },
      );
      const res = await client.responses.create({
        input: [
          userWithImage('Here is a photo.', red),
          { type: 'image_generation_call', id: 'ig_earlier', status: 'completed', result: null } as any,
          { role: 'user', content: 'Make the image you made bluer.' },
        ],
        tools: [{ type: 'image_generation' }],
      });
      expect(res.output[0]).toMatchObject({ status: 'failed', result: null });
      expect(edits()).toHaveLength(0);
      expect(chats().at(-1)!.body.messages.at(-1).content).toMatch(/sent back without its result/);
    });

    test('after a compaction no earlier image is edited (its images made are gone): the edit fails, saying why', async () => {
      const red = await redPng();
      // Compacted: the user's messages (the image among them) are kept, the images made are not.
      fake.script({ reply: 'Summary: a fox was drawn.' });
      const compacted = (
        await h.req('POST', '/v1/responses/compact', {
          key,
          body: {
            model: 'svc-oracle',
            input: [
              userWithImage('Use this.', red),
              { type: 'image_generation_call', id: 'ig_made', status: 'completed', result: FAKE_PNG_B64 },
            ],
          },
        })
      ).body;
      expect(compacted.output.map((o: any) => o.type)).toEqual(['message', 'compaction']);
      fake.script(
        { toolCalls: [{ id: 'e1', name: 'image_generation', arguments: { prompt: 'Bluer', edit: true } }] },
        { reply: 'Please give me the image again.' },
      );
      const res = await client.responses.create({
        input: [...compacted.output, { role: 'user', content: 'Make it bluer.' }],
        tools: [{ type: 'image_generation' }],
      });
      expect(res.output[0]).toMatchObject({ status: 'failed', result: null });
      expect(edits()).toHaveLength(0);
      expect(chats().at(-1)!.body.messages.at(-1).content).toMatch(/compacted after its images/);
    });

    test('a mask (inline or an uploaded file) goes with the edit; one of another size fails the call; one without alpha is 400', async () => {
      const red = await redPng(); // 8x8
      const maskOf = (size: number, alpha = true) =>
        sharp({
          create: { width: size, height: size, channels: alpha ? 4 : 3, background: { r: 0, g: 0, b: 0, alpha: 0 } },
        })
          .png()
          .toBuffer();
      const withImage = [userWithImage('Fill the hole.', red)];
      const editCall = { toolCalls: [{ id: 'm1', name: 'image_generation', arguments: { prompt: 'A window' } }] };

      fake.script(editCall, {}, { reply: 'ok' });
      const inline = `data:image/png;base64,${(await maskOf(8)).toString('base64')}`;
      const res = await client.responses.create({
        input: withImage,
        tools: [{ type: 'image_generation', action: 'edit', input_image_mask: { image_url: inline } }],
      });
      expect(res.output[0]).toMatchObject({ status: 'completed' });
      expect(
        edits()
          .at(-1)!
          .body.files.map((f: any) => [f.field, f.type]),
      ).toEqual([
        ['image', 'image/png'],
        ['mask', 'image/png'],
      ]);

      const uploaded = await client.files.create({
        file: await toFile(await maskOf(4), 'mask.png'),
        purpose: 'vision',
      });
      fake.script(editCall, { reply: 'The mask does not fit.' });
      const wrong = await client.responses.create({
        input: withImage,
        tools: [{ type: 'image_generation', action: 'edit', input_image_mask: { file_id: uploaded.id } }],
      });
      expect(wrong.output[0]).toMatchObject({ status: 'failed' });
      expect(chats().at(-1)!.body.messages.at(-1).content).toMatch(/the mask is 4x4 and the image to edit 8x8/);
      expect(edits()).toHaveLength(1);

      const opaque = `data:image/png;base64,${(await maskOf(8, false)).toString('base64')}`;
      const noAlpha = await post({
        input: 'x',
        tools: [{ type: 'image_generation', input_image_mask: { image_url: opaque } }],
      });
      expect([noAlpha.status, fields(noAlpha)]).toEqual([400, ['body.tools.0.input_image_mask.image_url']]);
      const unknown = await post({
        input: 'x',
        tools: [{ type: 'image_generation', input_image_mask: { file_id: 'file-nope' } }],
      });
      expect([unknown.status, fields(unknown)]).toEqual([404, ['body.tools.0.input_image_mask.file_id']]);
    });

    test('an image sent back that only starts like a PNG fails the edit, with a mask or without (no 500); the provider gets nothing', async () => {
      // The PNG signature, then junk: it sniffs as a PNG, but no header can be read from it.
      const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      const junk = Buffer.concat([signature, randomBytes(100)]).toString('base64');
      const mask = await sharp({
        create: { width: 1, height: 1, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
      })
        .png()
        .toBuffer();
      const withMask = { input_image_mask: { image_url: `data:image/png;base64,${mask.toString('base64')}` } };
      for (const extra of [withMask, {}]) {
        fake.script(
          { toolCalls: [{ id: 'j1', name: 'image_generation', arguments: { prompt: 'blue' } }] },
          { reply: 'That image could not be read.' },
        );
        const res = await post({
          model: 'svc-oracle',
          tools: [{ type: 'image_generation', action: 'edit', ...extra }],
          tool_choice: { type: 'image_generation' },
          input: [
            { type: 'image_generation_call', id: 'ig_x', status: 'completed', result: junk },
            { role: 'user', content: 'make it blue' },
          ],
        });
        expect([res.status, res.body.code]).toEqual([200, undefined]);
        expect(contractErrors('Response', res.body)).toEqual([]);
        expect(res.body.output.map((o: any) => [o.type, o.status, o.result ?? null])).toEqual([
          ['image_generation_call', 'failed', null],
          ['message', 'completed', null],
        ]);
        expect(chats().at(-1)!.body.messages.at(-1).content).toMatch(
          /^The image could not be made: the image to edit could not be read: .+/,
        );
        expect(edits()).toHaveLength(0);
      }
    });

    test('a mask over 10 MiB is 413 naming its field, by file_id as inline, before the lane is asked', async () => {
      const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
      const side = 1700; // RGBA noise does not compress: ~11.6 MB of PNG
      const big = await sharp(randomBytes(side * side * 4), { raw: { width: side, height: side, channels: 4 } })
        .png()
        .toBuffer();
      expect(big.length).toBeGreaterThan(MAX_IMAGE_BYTES);
      const uploaded = await client.files.create({ file: await toFile(big, 'mask.png'), purpose: 'vision' });
      fake.script({ reply: 'ok' });
      const byId = await post({
        input: 'x',
        tools: [{ type: 'image_generation', input_image_mask: { file_id: uploaded.id } }],
      });
      expect([byId.status, byId.body.code, fields(byId)]).toEqual([
        413,
        'payload_too_large',
        ['body.tools.0.input_image_mask.file_id'],
      ]);
      // Inline, just over the cap (and under the schema's 14M characters): the same answer for its field.
      const over = big.subarray(0, MAX_IMAGE_BYTES + 3000).toString('base64');
      const inline = await post({
        input: 'x',
        tools: [{ type: 'image_generation', input_image_mask: { image_url: `data:image/png;base64,${over}` } }],
      });
      expect([inline.status, inline.body.code, fields(inline)]).toEqual([
        413,
        'payload_too_large',
        ['body.tools.0.input_image_mask.image_url'],
      ]);
      expect(chats()).toHaveLength(0);
    });

    test('action generate never edits; action edit always does', async () => {
      const red = await redPng();
      const withImage = (text: string) => [userWithImage(text, red)];
      fake.script(
        { toolCalls: [{ id: 'g1', name: 'image_generation', arguments: { prompt: 'A new one', edit: true } }] },
        {},
        { reply: 'ok' },
      );
      await client.responses.create({
        input: withImage('New picture.'),
        tools: [{ type: 'image_generation', action: 'generate' }],
      });
      expect(Object.keys(chats()[0].body.tools[0].function.parameters.properties)).toEqual(['prompt']);
      expect([imageRequests().length, edits().length]).toEqual([1, 0]);

      fake.script(
        { toolCalls: [{ id: 'g2', name: 'image_generation', arguments: { prompt: 'Brighter' } }] },
        {},
        { reply: 'ok' },
      );
      const res = await client.responses.create({
        input: withImage('Brighter.'),
        tools: [{ type: 'image_generation', action: 'edit' }],
      });
      expect(res.tools[0]).toMatchObject({ action: 'edit' });
      expect(Object.keys(chats().at(-2)!.body.tools[0].function.parameters.properties)).toEqual(['prompt']);
      expect([imageRequests().length, edits().length]).toEqual([1, 1]);
    });
  });

  test('refused with the field named: masks, transparent jpeg, a size the lane lacks, name clashes', async () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [
        {
          input: 'x',
          tools: [{ type: 'image_generation', action: 'generate', input_image_mask: { file_id: 'file_1' } }],
        },
        'body.tools.0.input_image_mask',
      ],
      [
        { input: 'x', tools: [{ type: 'image_generation', input_image_mask: { file_id: 'f', image_url: 'x' } }] },
        'body.tools.0.input_image_mask',
      ],
      [
        {
          input: 'x',
          tools: [{ type: 'image_generation', input_image_mask: { image_url: 'http://example.com/m.png' } }],
        },
        'body.tools.0.input_image_mask.image_url',
      ],
      [
        {
          input: 'x',
          tools: [{ type: 'image_generation', input_image_mask: { image_url: 'data:image/png;base64,@@' } }],
        },
        'body.tools.0.input_image_mask.image_url',
      ],
      [
        { input: 'x', tools: [{ type: 'image_generation', background: 'transparent', output_format: 'jpeg' }] },
        'body.tools.0.output_format',
      ],
      [
        { input: 'x', tools: [{ type: 'image_generation', output_compression: 101 }] },
        'body.tools.0.output_compression',
      ],
      [{ input: 'x', tools: [{ type: 'image_generation', partial_images: 4 }] }, 'body.tools.0.partial_images'],
      [{ input: 'x', tools: [{ type: 'image_generation', size: '1024x1536' }] }, 'body.tools.0.size'],
      [{ input: 'x', tools: [{ type: 'image_generation' }, { type: 'image_generation' }] }, 'body.tools'],
      [{ input: 'x', tool_choice: { type: 'image_generation' } }, 'body.tool_choice'],
      [
        { input: 'x', tools: [{ type: 'function', name: 'image_generation' }, { type: 'image_generation' }] },
        'body.tools.1',
      ],
    ];
    for (const [body, path] of bad) {
      const res = await post(body);
      expect([res.status, fields(res)]).toEqual([400, expect.arrayContaining([path])]);
    }
    expect(imageRequests()).toHaveLength(0);
    expect(chats()).toHaveLength(0);
  });

  test('no image provider configured: 503 naming it, before the lane is asked', async () => {
    const app = await startExtraApp(h, {
      config: { openai: { ...h.config.openai, baseUrl: undefined, apiKey: undefined } },
    });
    try {
      const res = await fetch(`${app.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'Draw.', tools: [{ type: 'image_generation' }] }),
      });
      expect(res.status).toBe(503);
      expect(JSON.stringify(await res.json())).toMatch(/No image provider is configured/);
    } finally {
      await app.close();
    }
    expect(chats()).toHaveLength(0);
  });
});
