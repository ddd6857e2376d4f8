package membudget

// LedgerHeader starts a ledger file.
const LedgerHeader = ledgerHeader
