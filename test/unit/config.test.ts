import { ConfigError, DEFAULT_DATABASE_URL, parseConfig } from '../../schema/config';

describe('parseConfig', () => {
  test('applies the documented defaults', () => {
    const c = parseConfig({});
    expect(c.port).toBe(8080);
    expect(c.host).toBe('127.0.0.1');
    expect(c.databaseUrl).toBe(DEFAULT_DATABASE_URL);
    expect(c.databaseUrlExplicit).toBe(false);
    expect(c.temporal.namespace).toBe('default');
    expect(c.temporal.address).toBeUndefined();
    expect(c.dataDir).toBe('./.data');
    expect(c.bodyLimit).toBe(1024 * 1024);
    expect(c.registrationToken).toBeUndefined();
    expect(c.http.fastPath).toBe(true);
  });

  test('SVC_HTTP_FAST_PATH turns the fast path of the model routes off', () => {
    expect(parseConfig({ SVC_HTTP_FAST_PATH: 'false' }).http.fastPath).toBe(false);
    expect(parseConfig({ SVC_HTTP_FAST_PATH: '0' }).http.fastPath).toBe(false);
    expect(parseConfig({ SVC_HTTP_FAST_PATH: '1' }).http.fastPath).toBe(true);
  });

  test('reads every variable', () => {
    const c = parseConfig({
      PORT: '9000',
      DATABASE_URL: 'postgres://u@db:5432/x',
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_TASK_QUEUE: 'q',
      SVC_REGISTRATION_TOKEN: 'tok',
      OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
      SVC_LOG_LEVEL: 'warn',
    });
    expect(c.port).toBe(9000);
    expect(c.databaseUrlExplicit).toBe(true);
    expect(c.temporal.address).toBe('temporal:7233');
    expect(c.temporal.taskQueue).toBe('q');
    expect(c.registrationToken).toBe('tok');
    expect(c.openai.baseUrl).toBe('http://127.0.0.1:11434/v1');
    expect(c.logLevel).toBe('warn');
  });

  test.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['TEMPORAL_ADDRESS', 'no-port'],
    ['OPENAI_BASE_URL', 'not a url'],
    ['SVC_LOG_LEVEL', 'loud'],
    ['SVC_API_PROCESSES', '0'],
    ['SVC_API_PROCESSES', '17'],
    ['SVC_API_PROCESSES', '1.5'],
    ['SVC_API_PROCESSES', 'many'],
    ['SVC_HTTP_FAST_PATH', 'maybe'],
    ['SVC_EXTRACT_MEMORY_MB', '512'],
    ['SVC_EXTRACT_MEMORY_MB', '-1'],
    ['SVC_EXTRACT_MEMORY_MB', 'lots'],
  ])('a bad %s stops start-up naming the variable', (name, value) => {
    expect(() => parseConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => parseConfig({ [name]: value })).toThrow(name);
  });

  test('SVC_EXTRACT_MEMORY_MB: 2048 by default, 0 for no cap, else at least 1024', () => {
    expect(parseConfig({}).extractMemoryMb).toBe(2048);
    expect(parseConfig({ SVC_EXTRACT_MEMORY_MB: '0' }).extractMemoryMb).toBe(0);
    expect(parseConfig({ SVC_EXTRACT_MEMORY_MB: '1024' }).extractMemoryMb).toBe(1024);
  });

  test('SVC_API_PROCESSES: 1 by default, a count, or auto', () => {
    expect(parseConfig({}).apiProcesses).toBe(1);
    expect(parseConfig({ SVC_API_PROCESSES: '4' }).apiProcesses).toBe(4);
    expect(parseConfig({ SVC_API_PROCESSES: ' Auto ' }).apiProcesses).toBe('auto');
  });
});
