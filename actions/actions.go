// Package actions holds offcc's job graph and the executor that runs it:
// jobs with explicit inputs and outputs, scheduled longest path first under a
// concurrency limit and an optional make jobserver.
package actions
