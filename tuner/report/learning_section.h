#pragma once
// The report's "Does retraining learn?" section (`gpusched report
// --learning`): what `gpusched learning` computes (tuner/modes/learning.h),
// drawn. Per pipeline, the model's pick over its batch's best for the
// starting weights, the hold-one-out model and Autotune's own loop (the
// paper's figure 8, one marker each); the learning curve (mean
// Kendall and top-1 against the batches per pipeline trained on); and the
// hold-one-out table. The report only draws it: the training happens in the
// command that asks for it.

#include <string>

#include "tuner/modes/learning.h"

namespace gpusched::report {

std::string learning_section(const LearningReport &learning);

} // namespace gpusched::report
