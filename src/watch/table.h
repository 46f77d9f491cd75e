// The live table `gpuprep watch` redraws on a terminal: a header line, one row per GPU (duty, SM
// activity, memory, power and limit, SM clock, PCIe and NVLink rates, processes, the current verdict),
// then each GPU's current verdict with its evidence sentence (as many as fit). Sized for 8-16 GPUs in 100
// columns; every line is cut to `columns` (a narrower terminal loses the right end, never wraps). Every value
// from NVML or a recording passes TerminalSafe. Pure: the CLI positions the cursor and writes it.
#pragma once
#include <string>
#include <vector>

#include "watch/sample.h"
#include "watch/verdict.h"

namespace gp::watch {

// `verdicts`: the last window's verdicts (empty before the first closes); `color`: ANSI colour for the
// verdict names (a terminal without NO_COLOR). `rows` bounds the lines (0: no bound) so a redraw never
// scrolls: the evidence lines come after the rows, those of GPUs not healthy first, and what does not
// fit is counted on one last line.
std::string RenderTable(const Sample& s, const std::vector<Verdict>& verdicts, int columns, int rows,
                        bool color);

// `line` cut to at most `columns` bytes, never inside a UTF-8 sequence.
std::string CutToColumns(const std::string& line, int columns);

}  // namespace gp::watch
