import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import type { FakeOpenAI } from '../helpers/fake-openai';
import { contractErrors, postResponseStream, readResponseEvents, streamEventErrors } from '../helpers/openai-contract';
import { withFakeUpstream } from '../helpers/fake-upstream';
import { fields, type Harness } from '../helpers/harness';

// OpenAI's client-run built-in tools (shell, apply_patch, local_shell, computer) over a persona lane, against a fake
// OpenAI-compatible upstream: offered to the lane as functions, their calls come back as the tools' own items, and the
// client's outputs go back to the lane as text.

let h: Harness;
let fake: FakeOpenAI;
let key: string;
let client: OpenAI;

withFakeUpstream({ scopes: ['runtime:chat'], resetEach: {} }, (up) => {
  ({ fake, h, key } = up);
  client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: key, maxRetries: 0 });
});

const post = (body: unknown) => h.req('POST', '/v1/responses', { key, body });
/** The messages the upstream got, after the persona's system message. */
const sentMessages = (i = -1) => fake.chats.at(i)!.body.messages.slice(1);
const streamRaw = (body: Record<string, unknown>) => postResponseStream(h.url, key, body);
const sentTool = (name: string) =>
  (fake.chats.at(-1)!.body.tools as Array<{ function: { name: string; description: string; parameters: any } }>).find(
    (t) => t.function.name === name,
  )!;

describe('the shell tool', () => {
  const shell = {
    type: 'shell' as const,
    environment: {
      type: 'local' as const,
      skills: [{ name: 'pdf', description: 'Reads PDF files.', path: '/home/me/skills/pdf' }],
    },
  };

  test('a call comes back as a shell_call in the contract; its output (exit codes, stdout, stderr) continues', async () => {
    fake.script({
      toolCalls: [{ id: 'call_s1', name: 'shell', arguments: { commands: ['ls', 'cat README.md'], timeout_ms: 5000 } }],
    });
    const first = await client.responses.create({
      model: 'svc-oracle',
      input: 'What is in this folder?',
      tools: [shell],
      tool_choice: { type: 'shell' },
    });
    expect(contractErrors('Response', first)).toEqual([]);
    expect(first.output).toHaveLength(1);
    expect(first.output[0]).toEqual({
      type: 'shell_call',
      id: expect.stringMatching(/^sh_/),
      call_id: 'call_s1',
      action: { commands: ['ls', 'cat README.md'], timeout_ms: 5000, max_output_length: null },
      status: 'completed',
      environment: { type: 'local' },
    });
    expect(first.tools).toEqual([shell]);
    const sent = fake.chats.at(-1)!.body;
    expect(sent.tool_choice).toEqual({ type: 'function', function: { name: 'shell' } });
    const fn = sentTool('shell').function;
    expect(fn.parameters.required).toEqual(['commands']);
    expect(fn.description).toContain('- pdf (/home/me/skills/pdf): Reads PDF files.');

    fake.script({ reply: 'A README and a src folder.' });
    const second = await client.responses.create({
      model: 'svc-oracle',
      previous_response_id: first.id,
      tools: [shell],
      input: [
        {
          type: 'shell_call_output',
          call_id: 'call_s1',
          max_output_length: 4096,
          output: [
            { stdout: 'README.md\nsrc\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } },
            { stdout: '', stderr: 'cat: README.md: Permission denied', outcome: { type: 'exit', exit_code: 1 } },
          ],
        },
      ],
    });
    expect(contractErrors('Response', second)).toEqual([]);
    expect(second.output_text).toBe('A README and a src folder.');
    expect(sentMessages()).toEqual([
      { role: 'user', content: 'What is in this folder?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_s1',
            type: 'function',
            function: {
              name: 'shell',
              arguments: JSON.stringify({ commands: ['ls', 'cat README.md'], timeout_ms: 5000 }),
            },
          },
        ],
      },
      {
        role: 'tool',
        tool_call_id: 'call_s1',
        content:
          '[command 1] exit code 0\nstdout:\nREADME.md\nsrc\n\n\n[command 2] exit code 1\nstderr:\ncat: README.md: Permission denied',
      },
    ]);
    // The stored response's input item is OpenAI's shell_call_output resource.
    const items = await client.responses.inputItems.list(second.id);
    expect(items.data).toHaveLength(1);
    expect(contractErrors('ItemResource', items.data[0])).toEqual([]);
    expect(items.data[0]).toMatchObject({ type: 'shell_call_output', id: expect.stringMatching(/^sho_/) });
  });

  test('streamed: the commands go out in shell_call_command events, every event in the contract', async () => {
    fake.script({ toolCalls: [{ id: 'call_s2', name: 'shell', arguments: { commands: ['pwd', 'git status'] } }] });
    const events = await readResponseEvents(await streamRaw({ input: 'Where am I?', tools: [{ type: 'shell' }] }));
    for (const e of events) expect(streamEventErrors(e.data)).toEqual([]);
    const types = events.map((e) => e.event);
    expect(types).not.toContain('response.function_call_arguments.delta');
    const added = events.find((e) => e.event === 'response.output_item.added')!.data.item;
    expect(added).toMatchObject({ type: 'shell_call', status: 'in_progress', environment: null });
    expect(
      events
        .filter((e) => e.event === 'response.shell_call_command.done')
        .map((e) => [e.data.command_index, e.data.command]),
    ).toEqual([
      [0, 'pwd'],
      [1, 'git status'],
    ]);
    const last = events.at(-1)!.data.response;
    expect(last.status).toBe('completed');
    expect(contractErrors('Response', last)).toEqual([]);
    expect(last.output).toEqual([
      expect.objectContaining({
        type: 'shell_call',
        id: added.id,
        call_id: 'call_s2',
        action: { commands: ['pwd', 'git status'], timeout_ms: null, max_output_length: null },
      }),
    ]);
  });

  test('a model that writes `command` or a bare string still gives commands; unreadable arguments give none', async () => {
    fake.script({ toolCalls: [{ id: 'c1', name: 'shell', arguments: { command: 'make test', timeout_ms: -3 } }] });
    const one = await post({ input: 'test it', tools: [{ type: 'shell' }] });
    expect(one.body.output[0].action).toEqual({ commands: ['make test'], timeout_ms: null, max_output_length: null });
    fake.script({ toolCalls: [{ id: 'c3', name: 'shell', arguments: { commands: ['ls', null, 7, 'pwd'] } }] });
    const mixed = await post({ input: 'look', tools: [{ type: 'shell' }] });
    expect(mixed.body.output[0].action.commands).toEqual(['ls', 'pwd']);
    // A NUL or a lone surrogate written as an escape is made storable: the response is stored, not a 500.
    fake.script({ toolCalls: [{ id: 'c4', name: 'shell', arguments: '{"commands":["echo a\\u0000b","\\ud800"]}' }] });
    const odd = await post({ input: 'echo', tools: [{ type: 'shell' }] });
    expect(odd.status).toBe(200);
    expect(odd.body.output[0].action.commands).toEqual(['echo a\ufffdb', '\ufffd']);
    expect((await h.req('GET', `/v1/responses/${odd.body.id}`, { key })).body.output).toEqual(odd.body.output);
    fake.script({ toolCalls: [{ id: 'c2', name: 'shell', arguments: 'rm -rf / --no-preserve-root' }] });
    const bad = await post({ input: 'clean up', tools: [{ type: 'shell' }] });
    expect(bad.status).toBe(200);
    // Text that is not the tool's arguments is never run as a command.
    expect(bad.body.output[0].action.commands).toEqual([]);
  });

  test('a client that keeps its own history sends the call and a timed-out output back', async () => {
    fake.script({ reply: 'It hung.' });
    const res = await post({
      store: false,
      tools: [{ type: 'shell' }],
      input: [
        { role: 'user', content: 'Run the server' },
        {
          type: 'shell_call',
          id: 'sh_abc',
          call_id: 'c7',
          status: 'completed',
          action: { commands: ['npm start'], timeout_ms: 1000, max_output_length: null },
          environment: { type: 'local' },
        },
        {
          type: 'shell_call_output',
          call_id: 'c7',
          output: [{ stdout: 'listening', stderr: '', outcome: { type: 'timeout' } }],
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(sentMessages().slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'c7',
            type: 'function',
            function: { name: 'shell', arguments: JSON.stringify({ commands: ['npm start'], timeout_ms: 1000 }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'c7', content: 'timed out\nstdout:\nlistening' },
    ]);
  });

  test('hosted containers, a function of the same name, a choice without the tool and a broken output are 400', async () => {
    const container = await post({ input: 'x', tools: [{ type: 'shell', environment: { type: 'container_auto' } }] });
    expect(container.status).toBe(400);
    expect(fields(container)).toContain('body.tools.0.environment.type');
    expect(JSON.stringify(container.body)).toContain("the 'container_auto' environment");

    const twice = await post({ input: 'x', tools: [{ type: 'shell' }, { type: 'function', name: 'shell' }] });
    expect(twice.status).toBe(400);
    expect(fields(twice)).toContain('body.tools');

    const choice = await post({ input: 'x', tools: [{ type: 'shell' }], tool_choice: { type: 'apply_patch' } });
    expect(choice.status).toBe(400);
    expect(fields(choice)).toContain('body.tool_choice');

    const broken = await post({
      input: [
        { type: 'shell_call_output', call_id: 'c1', output: [{ stdout: 'x', stderr: '', outcome: { type: 'crash' } }] },
      ],
    });
    expect(broken.status).toBe(400);
    expect(fields(broken).some((f) => f.startsWith('body.input.0.output.0.outcome'))).toBe(true);
    expect(fake.chats).toHaveLength(0);
  });
});

describe('the apply_patch tool', () => {
  const diff = '@@\n-hello\n+hello, world';

  test('a call comes back as an apply_patch_call with its operation; a failed output continues', async () => {
    fake.script({
      toolCalls: [{ id: 'call_p1', name: 'apply_patch', arguments: { type: 'update_file', path: 'src/a.ts', diff } }],
    });
    const first = await client.responses.create({
      model: 'svc-oracle',
      input: 'Greet the world',
      tools: [{ type: 'apply_patch' }],
      tool_choice: { type: 'apply_patch' },
    });
    expect(contractErrors('Response', first)).toEqual([]);
    expect(first.output).toEqual([
      {
        type: 'apply_patch_call',
        id: expect.stringMatching(/^apc_/),
        call_id: 'call_p1',
        status: 'completed',
        operation: { type: 'update_file', path: 'src/a.ts', diff },
      },
    ]);
    expect(fake.chats.at(-1)!.body.tool_choice).toEqual({ type: 'function', function: { name: 'apply_patch' } });
    expect(sentTool('apply_patch').function.parameters.properties.type.enum).toEqual([
      'create_file',
      'update_file',
      'delete_file',
    ]);

    fake.script({ reply: 'The patch did not apply.' });
    const second = await client.responses.create({
      model: 'svc-oracle',
      previous_response_id: first.id,
      tools: [{ type: 'apply_patch' }],
      input: [{ type: 'apply_patch_call_output', call_id: 'call_p1', status: 'failed', output: 'context not found' }],
    });
    expect(second.output_text).toBe('The patch did not apply.');
    expect(sentMessages().slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_p1',
            type: 'function',
            function: {
              name: 'apply_patch',
              arguments: JSON.stringify({ type: 'update_file', path: 'src/a.ts', diff }),
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_p1', content: 'failed: context not found' },
    ]);
  });

  test("OpenAI's nested operation is read; an unclear one changes nothing and never deletes", async () => {
    fake.script({
      toolCalls: [
        { id: 'p1', name: 'apply_patch', arguments: { operation: { type: 'delete_file', path: 'old.txt' } } },
        { id: 'p2', name: 'apply_patch', arguments: { type: 'remove', path: 'keep.txt' } },
        { id: 'p3', name: 'apply_patch', arguments: { type: 'create_file', path: 'new.txt', diff: '+hi' } },
      ],
    });
    const res = await post({ input: 'tidy up', tools: [{ type: 'apply_patch' }] });
    expect(contractErrors('Response', res.body)).toEqual([]);
    expect(res.body.output.map((o: { operation: unknown }) => o.operation)).toEqual([
      { type: 'delete_file', path: 'old.txt' },
      { type: 'update_file', path: 'keep.txt', diff: '' },
      { type: 'create_file', path: 'new.txt', diff: '+hi' },
    ]);
    fake.script({
      toolCalls: [
        // A file's content instead of a diff: written as the create diff's added lines.
        { id: 'p4', name: 'apply_patch', arguments: { type: 'create_file', path: 'a.txt', content: 'one\ntwo\n' } },
        // Nothing to create with, no path to delete: a change of nothing (never an empty file, never a deletion).
        { id: 'p5', name: 'apply_patch', arguments: { type: 'create_file', path: 'b.txt' } },
        { id: 'p6', name: 'apply_patch', arguments: { type: 'delete_file' } },
      ],
    });
    const more = await post({ input: 'write', tools: [{ type: 'apply_patch' }] });
    expect(more.body.output.map((o: { operation: unknown }) => o.operation)).toEqual([
      { type: 'create_file', path: 'a.txt', diff: '+one\n+two' },
      { type: 'update_file', path: 'b.txt', diff: '' },
      { type: 'update_file', path: '', diff: '' },
    ]);
    // What the service answered can be sent back as it is.
    fake.script({ reply: 'ok' });
    const back = await post({
      store: false,
      tools: [{ type: 'apply_patch' }],
      input: [{ role: 'user', content: 'write' }, ...more.body.output],
    });
    expect(back.status).toBe(200);
  });

  test('streamed: the call is added and done in the contract', async () => {
    fake.script({
      toolCalls: [
        { id: 'call_p2', name: 'apply_patch', arguments: { type: 'create_file', path: 'b.md', diff: '+# B' } },
      ],
    });
    const events = await readResponseEvents(await streamRaw({ input: 'Add b.md', tools: [{ type: 'apply_patch' }] }));
    for (const e of events) expect(streamEventErrors(e.data)).toEqual([]);
    const done = events.find((e) => e.event === 'response.output_item.done')!.data.item;
    expect(done).toMatchObject({
      type: 'apply_patch_call',
      operation: { type: 'create_file', path: 'b.md', diff: '+# B' },
    });
    expect(events.at(-1)!.data.response.output).toEqual([done]);
  });
});

describe('the local_shell tool', () => {
  test("a call comes back as a local_shell_call; OpenAI's output form (the call's id as id) continues", async () => {
    fake.script({
      toolCalls: [
        {
          id: 'call_l1',
          name: 'local_shell',
          arguments: { command: ['ls', '-la'], env: { LANG: 'C', N: 3 }, working_directory: '/tmp' },
        },
      ],
    });
    const first = await client.responses.create({
      model: 'svc-oracle',
      input: 'List /tmp',
      tools: [{ type: 'local_shell' }],
    });
    expect(contractErrors('Response', first)).toEqual([]);
    expect(first.output).toEqual([
      {
        type: 'local_shell_call',
        id: expect.stringMatching(/^lsh_/),
        call_id: 'call_l1',
        action: {
          type: 'exec',
          command: ['ls', '-la'],
          env: { LANG: 'C' },
          timeout_ms: null,
          working_directory: '/tmp',
          user: null,
        },
        status: 'completed',
      },
    ]);

    fake.script({ reply: 'Empty.' });
    const second = await post({
      previous_response_id: first.id,
      tools: [{ type: 'local_shell' }],
      input: [{ type: 'local_shell_call_output', id: 'call_l1', output: '{"stdout":"total 0\\n","exit_code":0}' }],
    });
    expect(second.status).toBe(200);
    expect(sentMessages().slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_l1', content: '{"stdout":"total 0\\n","exit_code":0}' },
    ]);
    expect(JSON.parse(sentMessages().at(1).tool_calls[0].function.arguments)).toEqual({
      command: ['ls', '-la'],
      env: { LANG: 'C' },
      working_directory: '/tmp',
    });

    const unnamed = await post({ input: [{ type: 'local_shell_call_output', output: '{}' }] });
    expect(unnamed.status).toBe(400);
    expect(fields(unnamed)).toContain('body.input.0.call_id');
  });
});

describe('built-in client tools beside the others', () => {
  test('a round of function, custom and shell calls comes back as three kinds; all three outputs continue it', async () => {
    fake.script({
      toolCalls: [
        { id: 'f1', name: 'lookup', arguments: { q: 'x' } },
        { id: 'k1', name: 'note', arguments: { input: 'remember x' } },
        { id: 's1', name: 'shell', arguments: { commands: ['echo x'] } },
      ],
    });
    const tools = [
      { type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
      { type: 'custom', name: 'note' },
      { type: 'shell' },
    ];
    const first = await post({ input: 'Do three things', tools });
    expect(contractErrors('Response', first.body)).toEqual([]);
    expect(first.body.output.map((o: { type: string }) => o.type)).toEqual([
      'function_call',
      'custom_tool_call',
      'shell_call',
    ]);
    fake.script({ reply: 'All done.' });
    const second = await post({
      previous_response_id: first.body.id,
      tools,
      input: [
        { type: 'function_call_output', call_id: 'f1', output: 'found' },
        { type: 'custom_tool_call_output', call_id: 'k1', output: 'noted' },
        {
          type: 'shell_call_output',
          call_id: 's1',
          output: [{ stdout: 'x\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } }],
        },
      ],
    });
    expect(second.status).toBe(200);
    const sent = sentMessages();
    expect(sent[1].tool_calls.map((c: { id: string }) => c.id)).toEqual(['f1', 'k1', 's1']);
    expect(sent.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'f1', content: 'found' },
      { role: 'tool', tool_call_id: 'k1', content: 'noted' },
      { role: 'tool', tool_call_id: 's1', content: 'exit code 0\nstdout:\nx\n' },
    ]);
  });

  test('input_tokens counts the tools as the lane gets them', async () => {
    const bare = await h.req('POST', '/v1/responses/input_tokens', { key, body: { input: 'hi' } });
    const withShell = await h.req('POST', '/v1/responses/input_tokens', {
      key,
      body: { input: 'hi', tools: [{ type: 'shell' }, { type: 'apply_patch' }] },
    });
    expect(withShell.status).toBe(200);
    expect(withShell.body.input_tokens).toBeGreaterThan(bare.body.input_tokens + 50);
  });
});

describe('the computer tools', () => {
  const preview = {
    type: 'computer_use_preview' as const,
    environment: 'browser' as const,
    display_width: 1024,
    display_height: 768,
  };
  const screenshot = async (color: string) =>
    sharp({ create: { width: 32, height: 24, channels: 3, background: color } })
      .png()
      .toBuffer();

  test('computer_use_preview: a computer_call with one action; the screenshot reaches the lane as an image', async () => {
    fake.script({
      toolCalls: [{ id: 'call_c1', name: 'computer_use_preview', arguments: { type: 'click', x: 10.4, y: 20 } }],
    });
    const first = await client.responses.create({
      model: 'svc-oracle',
      input: 'Open the menu',
      tools: [preview],
      tool_choice: { type: 'computer_use_preview' },
      truncation: 'auto',
    });
    expect(contractErrors('Response', first)).toEqual([]);
    expect(first.output).toEqual([
      {
        type: 'computer_call',
        id: expect.stringMatching(/^cu_/),
        call_id: 'call_c1',
        action: { type: 'click', button: 'left', x: 10, y: 20 },
        pending_safety_checks: [],
        status: 'completed',
      },
    ]);
    expect(first.tools).toEqual([preview]);
    expect(fake.chats.at(-1)!.body.tool_choice).toEqual({
      type: 'function',
      function: { name: 'computer_use_preview' },
    });
    expect(sentTool('computer_use_preview').function.description).toContain('browser display (1024x768 pixels');

    const png = await screenshot('#00f');
    fake.script({ reply: 'The menu is open.' });
    const second = await client.responses.create({
      model: 'svc-oracle',
      previous_response_id: first.id,
      tools: [preview],
      input: [
        {
          type: 'computer_call_output',
          call_id: 'call_c1',
          output: { type: 'computer_screenshot', image_url: `data:image/png;base64,${png.toString('base64')}` },
          acknowledged_safety_checks: [],
        },
      ],
    });
    expect(second.output_text).toBe('The menu is open.');
    const sent = sentMessages();
    expect(sent[1].tool_calls[0].function).toEqual({
      name: 'computer_use_preview',
      arguments: JSON.stringify({ type: 'click', button: 'left', x: 10, y: 20 }),
    });
    expect(sent[2]).toEqual({
      role: 'tool',
      tool_call_id: 'call_c1',
      content: 'Done. The screenshot of the display after this call is in the next message.',
    });
    expect(sent[3].role).toBe('user');
    expect(sent[3].content[0]).toEqual({ type: 'text', text: '[Screenshot after the computer call call_c1]' });
    expect(sent[3].content[1].image_url.url).toMatch(/^data:image\/(png|jpeg);base64,/);
    expect(sent).toHaveLength(4);
    const items = await client.responses.inputItems.list(second.id);
    expect(contractErrors('ItemResource', items.data[0])).toEqual([]);
  });

  test('computer: a list of actions per call; two calls answered, their screenshots after both answers', async () => {
    fake.script({
      toolCalls: [
        {
          id: 'k1',
          name: 'computer',
          arguments: {
            actions: [
              { type: 'type', text: 'hello' },
              { type: 'keypress', keys: ['ENTER'] },
              { type: 'scroll', x: 5, y: 5, scroll_y: 300 },
              {
                type: 'drag',
                path: [
                  { x: 1, y: 2 },
                  { x: 3.6, y: 4 },
                ],
              },
              { type: 'teleport' },
            ],
          },
        },
        { id: 'k2', name: 'computer', arguments: { actions: [{ type: 'wait' }] } },
      ],
    });
    const first = await post({
      input: 'Search for hello',
      tools: [{ type: 'computer' }],
      tool_choice: { type: 'computer_use' },
    });
    expect(first.status).toBe(200);
    expect(contractErrors('Response', first.body)).toEqual([]);
    expect(fake.chats.at(-1)!.body.tool_choice).toEqual({ type: 'function', function: { name: 'computer' } });
    expect(first.body.output[0].actions).toEqual([
      { type: 'type', text: 'hello' },
      { type: 'keypress', keys: ['ENTER'] },
      { type: 'scroll', x: 5, y: 5, scroll_x: 0, scroll_y: 300 },
      {
        type: 'drag',
        path: [
          { x: 1, y: 2 },
          { x: 4, y: 4 },
        ],
      },
      // An action of no known type changes nothing: a screenshot.
      { type: 'screenshot' },
    ]);
    expect(first.body.output[1].actions).toEqual([{ type: 'wait' }]);

    const [a, b] = [await screenshot('#f00'), await screenshot('#0f0')];
    const file = await client.files.create({ file: await toFile(b, 'shot.png'), purpose: 'vision' });
    fake.script({ reply: 'Searched.' });
    const second = await post({
      previous_response_id: first.body.id,
      tools: [{ type: 'computer' }],
      input: [
        {
          type: 'computer_call_output',
          call_id: 'k1',
          output: { type: 'computer_screenshot', image_url: `data:image/png;base64,${a.toString('base64')}` },
        },
        { type: 'computer_call_output', call_id: 'k2', output: { type: 'computer_screenshot', file_id: file.id } },
      ],
    });
    expect(second.status).toBe(200);
    const sent = sentMessages();
    expect(sent.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user', 'user']);
    expect(sent[1].tool_calls.map((c: { function: { name: string } }) => c.function.name)).toEqual([
      'computer',
      'computer',
    ]);
    expect(sent[4].content[0].text).toContain('k1');
    expect(sent[5].content[0].text).toContain('k2');
    expect(sent[5].content[1].image_url.url).toMatch(/^data:image\/(png|jpeg);base64,/);
    // The stored item holds the screenshot it was given by file id in place of the id (as an input image's).
    const items = await client.responses.inputItems.list(second.body.id, { order: 'asc' });
    expect(items.data[1]).toMatchObject({
      type: 'computer_call_output',
      output: { type: 'computer_screenshot', image_url: expect.stringMatching(/^data:image\/png/) },
    });
    expect((items.data[1] as unknown as { output: object }).output).not.toHaveProperty('file_id');
    for (const item of items.data) expect(contractErrors('ItemResource', item)).toEqual([]);
  });

  test('streamed: the call is added without its action, done with it, every event in the contract', async () => {
    fake.script({
      toolCalls: [{ id: 'call_c9', name: 'computer', arguments: { actions: [{ type: 'move', x: 3, y: 4 }] } }],
    });
    const events = await readResponseEvents(await streamRaw({ input: 'Hover', tools: [{ type: 'computer' }] }));
    for (const e of events) expect(streamEventErrors(e.data)).toEqual([]);
    const added = events.find((e) => e.event === 'response.output_item.added')!.data.item;
    expect(added).toEqual({
      type: 'computer_call',
      id: expect.stringMatching(/^cu_/),
      call_id: 'call_c9',
      pending_safety_checks: [],
      status: 'in_progress',
    });
    const done = events.find((e) => e.event === 'response.output_item.done')!.data.item;
    expect(done).toEqual({ ...added, status: 'completed', actions: [{ type: 'move', x: 3, y: 4 }] });
    expect(events.at(-1)!.data.response.output).toEqual([done]);
  });

  test('the lane is shown the latest 3 screenshots; earlier ones (and their files) are not read', async () => {
    const png = `data:image/png;base64,${(await screenshot('#888')).toString('base64')}`;
    const round = (n: number, output: Record<string, unknown>) => [
      { type: 'computer_call', call_id: `r${n}`, action: { type: 'screenshot' } },
      { type: 'computer_call_output', call_id: `r${n}`, output: { type: 'computer_screenshot', ...output } },
    ];
    fake.script({ reply: 'Seen.' });
    const res = await post({
      tools: [preview],
      input: [
        { role: 'user', content: 'Watch the screen' },
        // The first screenshot's file does not exist: it is not shown, so it is not read (no 404).
        ...round(1, { file_id: 'file-notread' }),
        ...round(2, { image_url: png }),
        ...round(3, { image_url: png }),
        ...round(4, { image_url: png }),
      ],
    });
    expect(res.status).toBe(200);
    const sent = sentMessages();
    const images = sent.filter(
      (m: { role: string; content: unknown }) => m.role === 'user' && Array.isArray(m.content),
    );
    expect(images.map((m: { content: Array<{ text?: string }> }) => m.content[0].text)).toEqual([
      '[Screenshot after the computer call r2]',
      '[Screenshot after the computer call r3]',
      '[Screenshot after the computer call r4]',
    ]);
    expect(sent[2]).toEqual({
      role: 'tool',
      tool_call_id: 'r1',
      content: 'Done. (Its screenshot is left out: the model is shown the latest 3.)',
    });
    const items = await client.responses.inputItems.list(res.body.id, { order: 'asc' });
    expect(items.data[2]).toMatchObject({ output: { type: 'computer_screenshot', file_id: 'file-notread' } });
  });

  test("a screenshot waits for the turn's last tool answer, whatever items stand between", async () => {
    const png = `data:image/png;base64,${(await screenshot('#444')).toString('base64')}`;
    fake.script({ reply: 'ok' });
    const res = await post({
      store: false,
      tools: [{ type: 'shell' }, { type: 'computer' }],
      input: [
        { role: 'user', content: 'Go' },
        { type: 'shell_call', call_id: 's1', action: { commands: ['date'] } },
        { type: 'computer_call', call_id: 'a1', actions: [{ type: 'wait' }] },
        { type: 'computer_call_output', call_id: 'a1', output: { type: 'computer_screenshot', image_url: png } },
        // An item that gives the lane no message (a server's tool list) between the two answers.
        { type: 'mcp_list_tools', server_label: 'x', tools: [] },
        {
          type: 'shell_call_output',
          call_id: 's1',
          output: [{ stdout: 'Fri', stderr: '', outcome: { type: 'exit', exit_code: 0 } }],
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(sentMessages().map((m: { role: string; tool_call_id?: string }) => m.tool_call_id ?? m.role)).toEqual([
      'user',
      'assistant',
      'a1',
      's1',
      'user',
    ]);
  });

  test('actions the model wrote unclearly: numbers as text and coordinate pairs read; the rest a screenshot', async () => {
    fake.script({
      toolCalls: [
        {
          id: 'u1',
          name: 'computer',
          arguments: {
            actions: [
              { type: 'click', x: '512', y: ' 300 ' },
              { type: 'double_click', coordinate: [5, 6] },
              { type: 'click' },
              { type: 'drag', path: [{ x: 1, y: 1 }, null] },
              { type: 'type' },
              { type: 'keypress', keys: [] },
              { type: 'scroll', x: 1, y: 1 },
            ],
          },
        },
        { id: 'u2', name: 'computer', arguments: { actions: [] } },
      ],
    });
    const res = await post({ input: 'Do it', tools: [{ type: 'computer' }] });
    expect(contractErrors('Response', res.body)).toEqual([]);
    const shot = { type: 'screenshot' };
    expect(res.body.output[0].actions).toEqual([
      { type: 'click', button: 'left', x: 512, y: 300 },
      { type: 'double_click', x: 5, y: 6, keys: null },
      shot,
      shot,
      shot,
      shot,
      shot,
    ]);
    expect(res.body.output[1].actions).toEqual([shot]);
    // What the service answered can be sent back as it is.
    fake.script({ reply: 'ok' });
    const back = await post({
      store: false,
      tools: [{ type: 'computer' }],
      input: ['Do it', ...res.body.output].map((i) => (typeof i === 'string' ? { role: 'user', content: i } : i)),
    });
    expect(back.status).toBe(200);
  });

  test('a screenshot that is not an image, an unknown file, two computer tools, no action: 4xx naming the field', async () => {
    const notImage = await post({
      input: [
        { role: 'user', content: 'x' },
        { type: 'computer_call', call_id: 'c1', action: { type: 'screenshot' } },
        {
          type: 'computer_call_output',
          call_id: 'c1',
          output: { type: 'computer_screenshot', image_url: 'data:image/png;base64,AAAA' },
        },
      ],
    });
    expect(notImage.status).toBe(415);
    expect(fields(notImage)).toEqual(['body.input.2.output.image_url']);

    const unknown = await post({
      input: [
        { type: 'computer_call', call_id: 'c1', action: { type: 'wait' } },
        { type: 'computer_call_output', call_id: 'c1', output: { type: 'computer_screenshot', file_id: 'file-nope' } },
      ],
    });
    expect(unknown.status).toBe(404);
    expect(fields(unknown)).toEqual(['body.input.1.output.file_id']);

    const both = await post({ input: 'x', tools: [preview, { type: 'computer' }] });
    expect(both.status).toBe(400);
    expect(fields(both)).toContain('body.tools');

    const empty = await post({ input: [{ type: 'computer_call', call_id: 'c1' }] });
    expect(empty.status).toBe(400);
    expect(fields(empty)).toContain('body.input.0.action');

    const png = (await screenshot('#abc')).toString('base64');
    const notPng = await client.files.create({
      file: await toFile(Buffer.from('not an image at all'), 'shot.png'),
      purpose: 'user_data',
    });
    const fromFile = await post({
      input: [
        { type: 'computer_call', call_id: 'c1', action: { type: 'wait' } },
        { type: 'computer_call_output', call_id: 'c1', output: { type: 'computer_screenshot', file_id: notPng.id } },
      ],
    });
    expect(fromFile.status).toBe(415);
    expect(fields(fromFile)).toEqual(['body.input.1.output.file_id']);
    expect(png.length).toBeGreaterThan(0);

    const twoImages = await post({
      input: [
        {
          type: 'computer_call_output',
          call_id: 'c1',
          output: { type: 'computer_screenshot', image_url: 'data:image/png;base64,AAAA', file_id: 'file-x' },
        },
      ],
    });
    expect(twoImages.status).toBe(400);
    expect(fields(twoImages)).toContain('body.input.0.output.image_url');
    expect(fake.chats).toHaveLength(0);
  });
});
