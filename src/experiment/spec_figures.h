// The figures a spec asks for (FigureSpec), drawn as SVG by svg_figure.h like the rest of the
// report: no plotting library, nothing read at run time but the database.
//   profiles:   lambda1 and lambda2 per layer of each method's best state, two panels (Fig. 1a)
//   trajectory: each evaluation's dev score, the dev best so far and the test replay of each
//               accepted state, by search order (Fig. 1b)
//   budgets:    test score per budget, one line per method, with its 95% interval where the
//               per-question scores are recorded (Fig. 1c)
// Torch-free.
#pragma once

#include <vector>

#include "experiment/cell_estimates.h"
#include "experiment/report_figures.h"
#include "experiment/results.h"
#include "experiment/spec.h"

namespace kvs::experiment {

// One SVG per figure of the spec, <name>.svg, in the spec's order.
std::vector<SvgFigure> spec_figures(const ExperimentSpec& spec, const ExperimentResults& results,
                                    const CellEstimates& estimates);

}  // namespace kvs::experiment
