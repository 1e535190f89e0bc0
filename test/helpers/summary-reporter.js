// Prints one plain closing line ("Tests: N passed, N failed, N skipped") that CI tooling reads.
// A suite that could not run at all counts as one failure.
const fs = require('node:fs');
const path = require('node:path');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const line = `Tests: ${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped`;
    // The ten slowest files, so a run's time can be read from its own log.
    const slow = results.testResults
      .map((r) => ({
        file: path.relative(process.cwd(), r.testFilePath),
        s: (r.perfStats.end - r.perfStats.start) / 1000,
      }))
      .sort((a, b) => b.s - a.s)
      .slice(0, 10)
      .map((r) => `  ${r.s.toFixed(1)} s  ${r.file}`);
    if (slow.length > 1) process.stdout.write(`\nSlowest files:\n${slow.join('\n')}\n`);
    // Under `npm test` (test/run-all.js) each of its runs hands its counts to the closing line.
    if (process.env.SVC_TEST_SUMMARY_FILE)
      fs.writeFileSync(
        process.env.SVC_TEST_SUMMARY_FILE,
        JSON.stringify({ passed: results.numPassedTests, failed, skipped }),
      );
    // Jest's own summary goes to stderr: repeat ours on both streams so it is last on either.
    process.stderr.write(`\n${line}\n`);
    process.stdout.write(`\n${line}\n`);
  }
}
module.exports = SummaryReporter;
