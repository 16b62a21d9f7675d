// Package analyzetest gives tests the analyzer's report of a capture
// file, the oracle other code under test (an encoder, a page) is checked
// against. It is imported by tests only; internal/testenv holds what they
// need from the machine, and cannot import the analyzer, whose packages'
// tests import it.
package analyzetest
