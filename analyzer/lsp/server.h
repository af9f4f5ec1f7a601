#pragma once
/// `oomlint server`: a Language Server (LSP 3.17) over stdio. Diagnostics are pushed on every
/// change and served on pull; quick fixes, noqa suppressions and source.fixAll.oomlint come as
/// code actions; hover shows the rule's documentation with its measured cost.

namespace oomlint::lsp {

/// Runs until `exit` (or end of input). Returns the process exit code (0 after shutdown).
int runServer(int in, int out);

}  // namespace oomlint::lsp
