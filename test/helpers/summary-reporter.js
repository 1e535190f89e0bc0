// Prints one plain closing line ("Tests: N passed, N failed, N skipped") that CI tooling reads.
// A suite that could not run at all counts as one failure.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const line = `Tests: ${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped`;
    // Jest's own summary goes to stderr: repeat ours on both streams so it is last on either.
    process.stderr.write(`\n${line}\n`);
    process.stdout.write(`\n${line}\n`);
  }
}
module.exports = SummaryReporter;
