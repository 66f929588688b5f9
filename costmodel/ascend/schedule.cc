#include "costmodel/ascend/schedule.h"

#include <algorithm>

namespace tilesmith::costmodel::ascend {

Expected<Schedule> ScheduleRequest(const ascgraph::Request& request,
                                   const ascgraph::Platform& platform,
                                   const ScheduleOptions& options) {
  TS_ASSIGN_OR_RETURN(ascgraph::BoundGraph bound, ascgraph::BindAndValidate(request));
  TS_ASSIGN_OR_RETURN(LoopNest nest, BuildLoopNest(bound));
  TilingModel model(std::move(nest), platform);
  TS_ASSIGN_OR_RETURN(std::vector<Candidate> solved, SolveAllCases(model));
  std::vector<Candidate> ranked = EnumerateAlternatives(model, solved);
  Candidate pick = solved.front();
  size_t rank = 1;
  while (rank <= ranked.size() && CheaperThan(ranked[rank - 1], pick)) ++rank;
  Candidate best = ranked.front();
  size_t considered = ranked.size();
  ranked.resize(std::min(ranked.size(), options.alternatives));
  return Schedule{std::move(model),  std::move(pick), std::move(best),
                  std::move(ranked), considered,      rank};
}

}  // namespace tilesmith::costmodel::ascend
