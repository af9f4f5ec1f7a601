#pragma once
/// Jupyter notebooks (nbformat 4) read as one Python module: the code cells in order, IPython
/// magics, shell escapes and help blanked (never a parse error), so facts flow across cells. Every
/// module line knows its cell, its line in the cell and the line of the notebook's JSON that holds
/// it (what SARIF and GitHub point at). Fixes are written back into the JSON text in place: outside
/// the changed lines of the changed cells, the file stays byte for byte what it was.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oomlint {

/// True for `.ipynb` paths.
bool isNotebookPath(std::string_view path);

struct NotebookCell {
  uint32_t number = 0;     // 1-based position among all cells (markdown too), as Jupyter shows them
  uint32_t firstLine = 0;  // 1-based line of the module where the cell begins
  uint32_t begin = 0;      // byte offset of the cell in the module
  std::vector<std::string> lines;    // the cell's source as written, one entry per line (with its '\n')
  std::vector<bool> blanked;         // per line: a magic, shell escape or help line, blank in the module
  std::vector<uint32_t> jsonLines;   // per line: 1-based line of the notebook file holding it
  bool endsWithNewline = false;      // the source's last line ends with '\n'
  // Where the cell's "source" value sits in the JSON text, and each array item's range.
  size_t sourceBegin = 0, sourceEnd = 0;
  bool sourceIsArray = true;
  std::vector<std::pair<size_t, size_t>> items;
};

struct Notebook {
  std::string module;               // the code cells joined, each ending with '\n'
  std::vector<NotebookCell> cells;  // code cells only, in order
  std::string error;                // not a notebook oomlint can read (malformed JSON, no code cells...)
  std::string skipped;              // a readable notebook that is deliberately not checked (kernel not Python)
};

/// Reads a notebook's JSON text.
Notebook readNotebook(std::string_view json);
/// readNotebook without its one-pass reading: the text parsed as a JSON document first. It is
/// what readNotebook falls back to for anything not plainly written, and what its one pass must
/// agree with (the tests compare the two).
Notebook readThroughDocument(std::string_view json);
/// The module of cells as an editor holds them (LSP notebook documents): the same joining and
/// blanking as a file, numbered in the order given, without JSON positions. `previous`, the
/// notebook this returned before an edit, gives up the cells whose text (at the same position) is
/// unchanged, so an edit of one cell of a long notebook splits and scans that cell only; the result
/// is the same as without it. `*previous` keeps its module text; its cells' lines are spent.
Notebook notebookFromCells(const std::vector<std::string>& cellTexts, Notebook* previous = nullptr);
/// An estimate's basis with its module lines ("`x` at line 12") named as the notebook shows
/// them ("`x` at cell 3, line 2").
std::string cellLinesIn(const Notebook& nb, std::string_view basis);
/// The module offsets where the code cells begin, in order.
std::vector<uint32_t> cellStartsOf(const Notebook& nb);
/// A code cell's source as written (magics included).
std::string cellText(const NotebookCell& cell);

struct CellPosition {
  uint32_t cell = 0;      // the cell's number (0: the line is in no cell)
  uint32_t line = 0;      // 1-based line within the cell
  uint32_t jsonLine = 0;  // 1-based line of the notebook file
};
/// Where a 1-based module line is.
CellPosition cellPosition(const Notebook& nb, uint32_t moduleLine);
/// The cell holding a module byte offset (index into `cells`), or -1.
int cellAt(const Notebook& nb, uint32_t offset);

/// The notebook's JSON with the cells' text replaced by `fixedModule` split at `cellStarts` (the
/// module offsets where each code cell now begins, one per cell). Lines a cell kept are written
/// exactly as they were (magics restored); a cell whose blanked lines a fix would touch is kept as
/// it was and counted in `refusedCells`.
std::string writeNotebook(std::string_view json, const Notebook& nb, const std::string& fixedModule,
                          const std::vector<uint32_t>& cellStarts, size_t& refusedCells);

}  // namespace oomlint
