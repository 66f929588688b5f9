// The work queue on every store (store_factories.h): enqueueing is idempotent per (job,
// sequence); a claim takes the oldest unit for the agent's device keys; a completion commits
// the unit's measurements with it, once; an expired lease is taken over and its late commit
// refused with nothing written; failures requeue until two agents failed a unit; agents
// racing on separate connections never claim one unit twice.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include "tests/db/store_factories.h"

namespace tilesmith::db::testing {
namespace {

using std::chrono::milliseconds;

WorkUnit Unit(const KernelRecord& kernel, const std::string& device_key, int64_t sequence,
              const std::string& job = "sweep-1") {
  WorkUnit unit;
  unit.job_id = job;
  unit.sequence = sequence;
  unit.device_key = device_key;
  unit.fingerprint = kernel.fingerprint;
  unit.name = kernel.name;
  unit.fusion_text = kernel.canonical_text;
  unit.payload = {{"target", "host"}, {"budget", sequence + 1}};
  return unit;
}

Lease LeaseOf(const WorkUnit& unit) { return {unit.id, unit.attempt, unit.owner}; }

AgentRecord Agent(std::string name, std::string host, std::vector<std::string> keys) {
  AgentRecord agent;
  agent.name = std::move(name);
  agent.host = std::move(host);
  agent.device_keys = std::move(keys);
  return agent;
}

class WorkQueueContract : public StoreContractTest {
 protected:
  // A store holding the host and H100 devices and one kernel, with `count` units for host.
  Store* StoreWithUnits(int count) {
    Store* store = NewStore();
    if (store == nullptr) return nullptr;
    Prepare(*store);
    std::vector<WorkUnit> units;
    for (int i = 0; i < count; ++i) units.push_back(Unit(kernel_, Host().Key(), i));
    auto added = store->EnqueueUnits(units);
    EXPECT_TRUE(added.has_value()) << added.error().message;
    return store;
  }

  void Prepare(Store& store) {
    ASSERT_TRUE(store.PutDevice(Host()).has_value());
    ASSERT_TRUE(store.PutDevice(H100()).has_value());
    ASSERT_TRUE(store.PutKernel(kernel_).has_value());
  }

  std::vector<std::string> HostKeys() const { return {Host().Key()}; }

  MeasurementRecord Measured(int config, const std::string& uid) const {
    MeasurementRecord m = Trial(kernel_, Host(), {{"block", config}}, 10.0 + config);
    m.uid = uid;
    m.job_id = "sweep-1";
    return m;
  }

  int64_t MeasurementCount(Store& store) const {
    auto all = store.Measurements({});
    EXPECT_TRUE(all.has_value()) << all.error().message;
    return all ? static_cast<int64_t>(all->size()) : -1;
  }

  KernelRecord kernel_ = Kernel("queued_fusion");
};

TEST_P(WorkQueueContract, EnqueueingTwiceAddsNothingAndUnitsRoundTrip) {
  Store* store = StoreWithUnits(3);
  ASSERT_NE(store, nullptr);
  auto again = store->EnqueueUnits(std::vector{Unit(kernel_, Host().Key(), 1)});
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(*again, 0);
  auto units = store->ListUnits("sweep-1");
  ASSERT_TRUE(units.has_value()) << units.error().message;
  ASSERT_EQ(units->size(), 3u);
  const WorkUnit& second = (*units)[1];
  EXPECT_GT(second.id, 0);
  EXPECT_EQ(second.sequence, 1);
  EXPECT_EQ(second.state, UnitState::kQueued);
  EXPECT_EQ(second.device_key, Host().Key());
  EXPECT_EQ(second.fusion_text, kernel_.canonical_text);
  EXPECT_EQ(second.payload["budget"], 2);
  EXPECT_EQ(second.attempt, 0);
  auto counts = store->CountUnits("sweep-1");
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(counts->queued, 3);
  EXPECT_EQ(counts->total(), 3);
  EXPECT_FALSE(counts->finished());
  auto other = store->CountUnits("another-job");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->total(), 0);

  WorkUnit bad = Unit(kernel_, "", 9);
  auto refused = store->EnqueueUnits(std::vector{bad});
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("device_key"), std::string::npos);
}

TEST_P(WorkQueueContract, AClaimTakesTheOldestUnitForTheAgentsDevicesOnly) {
  Store* store = NewStore();
  ASSERT_NE(store, nullptr);
  Prepare(*store);
  WorkUnit gpu = Unit(kernel_, H100().Key(), 0);
  WorkUnit arch = Unit(kernel_, "cuda:sm_90", 1);
  arch.match_prefix = true;
  WorkUnit host = Unit(kernel_, Host().Key(), 2);
  ASSERT_TRUE(store->EnqueueUnits(std::vector{gpu, arch, host}).has_value());

  std::vector<std::string> host_keys = HostKeys();
  auto first = store->ClaimUnit("host-agent", host_keys, 60000);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->sequence, 2);
  EXPECT_EQ((*first)->state, UnitState::kLeased);
  EXPECT_EQ((*first)->owner, "host-agent");
  EXPECT_EQ((*first)->attempt, 1);
  auto none = store->ClaimUnit("host-agent", host_keys, 60000);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value()) << "a host agent claimed a GPU unit";

  // Another H100 (another clock or driver) takes the architecture's unit, not the exact one.
  std::vector<std::string> other_h100 = {"cuda:sm_90:other-h100"};
  auto by_arch = store->ClaimUnit("gpu-b", other_h100, 60000);
  ASSERT_TRUE(by_arch.has_value() && by_arch->has_value());
  EXPECT_EQ((*by_arch)->sequence, 1);
  auto nothing = store->ClaimUnit("gpu-b", other_h100, 60000);
  ASSERT_TRUE(nothing.has_value());
  EXPECT_FALSE(nothing->has_value());
  std::vector<std::string> exact = {H100().Key()};
  auto exact_claim = store->ClaimUnit("gpu-a", exact, 60000);
  ASSERT_TRUE(exact_claim.has_value() && exact_claim->has_value());
  EXPECT_EQ((*exact_claim)->sequence, 0);
}

TEST_P(WorkQueueContract, CompletionCommitsTheMeasurementsOnceWithTheUnit) {
  Store* store = StoreWithUnits(1);
  ASSERT_NE(store, nullptr);
  AgentRecord agent = Agent("agent-a", "host-a", HostKeys());
  ASSERT_TRUE(store->PutAgent(agent).has_value());
  auto claimed = store->ClaimUnit("agent-a", HostKeys(), 60000);
  ASSERT_TRUE(claimed.has_value() && claimed->has_value());
  Lease lease = LeaseOf(**claimed);
  ASSERT_TRUE(store->RenewLease(lease, 60000).has_value());
  std::vector<MeasurementRecord> batch = {Measured(1, "unit-a1-0"), Measured(2, "unit-a1-1")};
  Status done = store->CompleteUnit(lease, batch, {{"best_us", 11.0}});
  ASSERT_TRUE(done.has_value()) << done.error().message;
  EXPECT_EQ(MeasurementCount(*store), 2);
  // The answer was lost and the agent commits again: nothing changes.
  Status again = store->CompleteUnit(lease, batch, {{"best_us", 11.0}});
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(MeasurementCount(*store), 2);

  auto units = store->ListUnits("sweep-1");
  ASSERT_TRUE(units.has_value());
  EXPECT_EQ(units->at(0).state, UnitState::kDone);
  EXPECT_EQ(units->at(0).result["best_us"], 11.0);
  auto counts = store->CountUnits("");
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(counts->done, 1);
  EXPECT_TRUE(counts->finished());
  auto agents = store->ListAgents(0);
  ASSERT_TRUE(agents.has_value());
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_EQ(agents->at(0).units_done, 1);
  EXPECT_EQ(agents->at(0).device_keys, HostKeys());
  EXPECT_GT(agents->at(0).last_seen_ms, 0);
  // A renewal after completion is refused: the unit moved on.
  EXPECT_FALSE(store->RenewLease(lease, 60000).has_value());
}

TEST_P(WorkQueueContract, AnExpiredLeaseIsTakenOverAndItsLateCommitRefused) {
  Store* store = StoreWithUnits(1);
  ASSERT_NE(store, nullptr);
  auto slow = store->ClaimUnit("slow-agent", HostKeys(), 50);
  ASSERT_TRUE(slow.has_value() && slow->has_value());
  std::this_thread::sleep_for(milliseconds(150));
  auto counts = store->CountUnits("sweep-1");
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(counts->expired, 1);
  Lease slow_lease = LeaseOf(**slow);
  Status renewed = store->RenewLease(slow_lease, 60000);
  ASSERT_FALSE(renewed.has_value()) << "an expired lease was renewed";
  EXPECT_NE(renewed.error().message.find("no longer held"), std::string::npos);

  auto taken = store->ClaimUnit("fast-agent", HostKeys(), 60000);
  ASSERT_TRUE(taken.has_value() && taken->has_value());
  EXPECT_EQ((*taken)->attempt, 2);
  EXPECT_EQ((*taken)->reclaims, 1);
  Status late = store->CompleteUnit(slow_lease, std::vector{Measured(1, "slow-0")}, {});
  ASSERT_FALSE(late.has_value()) << "a late commit was accepted";
  EXPECT_EQ(late.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(MeasurementCount(*store), 0) << "a refused commit wrote its measurements";
  EXPECT_FALSE(store->FailUnit(slow_lease, "too slow").has_value());

  ASSERT_TRUE(
      store->CompleteUnit(LeaseOf(**taken), std::vector{Measured(1, "fast-0")}, {}).has_value());
  EXPECT_EQ(MeasurementCount(*store), 1);
  auto final_counts = store->CountUnits("sweep-1");
  ASSERT_TRUE(final_counts.has_value());
  EXPECT_EQ(final_counts->done, 1);
  EXPECT_EQ(final_counts->reclaims, 1);
  EXPECT_EQ(final_counts->expired, 0);
}

TEST_P(WorkQueueContract, AUnitFailsForGoodOnlyOnceTwoAgentsFailedIt) {
  Store* store = StoreWithUnits(1);
  ASSERT_NE(store, nullptr);
  auto first = store->ClaimUnit("agent-a", HostKeys(), 60000);
  ASSERT_TRUE(first.has_value() && first->has_value());
  auto requeued = store->FailUnit(LeaseOf(**first), "worker crashed");
  ASSERT_TRUE(requeued.has_value()) << requeued.error().message;
  EXPECT_EQ(*requeued, UnitState::kQueued);
  auto second = store->ClaimUnit("agent-b", HostKeys(), 60000);
  ASSERT_TRUE(second.has_value() && second->has_value());
  EXPECT_EQ((*second)->attempt, 2);
  EXPECT_EQ((*second)->reclaims, 0) << "a requeued unit is no reclaimed lease";
  auto failed = store->FailUnit(LeaseOf(**second), "out of memory");
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(*failed, UnitState::kFailed);
  auto units = store->ListUnits("sweep-1");
  ASSERT_TRUE(units.has_value());
  const WorkUnit& unit = units->at(0);
  EXPECT_EQ(unit.state, UnitState::kFailed);
  EXPECT_NE(unit.error.find("worker crashed"), std::string::npos) << unit.error;
  EXPECT_NE(unit.error.find("out of memory"), std::string::npos) << unit.error;
  EXPECT_NE(unit.error.find("on 2 agents"), std::string::npos) << unit.error;
  EXPECT_EQ(unit.failures.size(), 2u);
  auto nothing = store->ClaimUnit("agent-c", HostKeys(), 60000);
  ASSERT_TRUE(nothing.has_value());
  EXPECT_FALSE(nothing->has_value());

  // One agent alone gives up after three failed attempts.
  Store* lonely = StoreWithUnits(1);
  ASSERT_NE(lonely, nullptr);
  UnitState state = UnitState::kQueued;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    auto claim = lonely->ClaimUnit("only-agent", HostKeys(), 60000);
    ASSERT_TRUE(claim.has_value() && claim->has_value()) << "attempt " << attempt;
    auto outcome = lonely->FailUnit(LeaseOf(**claim), "bad input");
    ASSERT_TRUE(outcome.has_value());
    state = *outcome;
  }
  EXPECT_EQ(state, UnitState::kFailed);
}

TEST_P(WorkQueueContract, AUnitGivenBackIsClaimableAtOnceWithNoFailureCounted) {
  Store* store = StoreWithUnits(1);
  ASSERT_NE(store, nullptr);
  auto first = store->ClaimUnit("stopping-agent", HostKeys(), 60000);
  ASSERT_TRUE(first.has_value() && first->has_value());
  Status released = store->ReleaseUnit(LeaseOf(**first));
  ASSERT_TRUE(released.has_value()) << released.error().message;
  EXPECT_FALSE(store->ReleaseUnit(LeaseOf(**first)).has_value()) << "released twice";
  auto next = store->ClaimUnit("other-agent", HostKeys(), 60000);
  ASSERT_TRUE(next.has_value() && next->has_value()) << "a released unit was not claimable";
  EXPECT_EQ((*next)->attempt, 2);
  EXPECT_EQ((*next)->reclaims, 0);
  EXPECT_TRUE((*next)->failures.empty());
  EXPECT_FALSE(store->CompleteUnit(LeaseOf(**first), {}, {}).has_value())
      << "the released lease still committed";
}

TEST_P(WorkQueueContract, CancellingAJobFailsItsUnclaimedUnitsAndLeavesARunningOne) {
  Store* store = StoreWithUnits(3);
  ASSERT_NE(store, nullptr);
  std::vector<WorkUnit> other = {Unit(kernel_, Host().Key(), 0, "job-2")};
  ASSERT_TRUE(store->EnqueueUnits(other).has_value());
  auto running = store->ClaimUnit("busy-agent", HostKeys(), 60000);
  ASSERT_TRUE(running.has_value() && running->has_value());
  auto cancelled = store->CancelUnits("sweep-1", "cancelled by a client");
  ASSERT_TRUE(cancelled.has_value()) << cancelled.error().message;
  EXPECT_EQ(*cancelled, 2) << "only the two unclaimed units of the job";
  auto counts = store->CountUnits("sweep-1");
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(counts->failed, 2);
  EXPECT_EQ(counts->leased, 1);
  auto units = store->ListUnits("sweep-1");
  ASSERT_TRUE(units.has_value());
  EXPECT_EQ((*units)[1].error, "cancelled by a client");
  EXPECT_TRUE(store->CompleteUnit(LeaseOf(**running), {}, {{"cancelled", true}}).has_value())
      << "the running unit's agent could not finish it";
  auto untouched = store->CountUnits("job-2");
  ASSERT_TRUE(untouched.has_value());
  EXPECT_EQ(untouched->queued, 1) << "another job's unit was cancelled";
  auto again = store->CancelUnits("sweep-1", "again");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, 0);
}

TEST_P(WorkQueueContract, AnAgentTakesUnitsItHasNotFailedFirst) {
  Store* store = StoreWithUnits(2);
  ASSERT_NE(store, nullptr);
  auto first = store->ClaimUnit("agent-a", HostKeys(), 60000);
  ASSERT_TRUE(first.has_value() && first->has_value());
  ASSERT_EQ((*first)->sequence, 0);
  ASSERT_TRUE(store->FailUnit(LeaseOf(**first), "flaky").has_value());
  auto next = store->ClaimUnit("agent-a", HostKeys(), 60000);
  ASSERT_TRUE(next.has_value() && next->has_value());
  EXPECT_EQ((*next)->sequence, 1) << "the agent took back the unit it had just failed";
  auto other = store->ClaimUnit("agent-b", HostKeys(), 60000);
  ASSERT_TRUE(other.has_value() && other->has_value());
  EXPECT_EQ((*other)->sequence, 0);
}

TEST_P(WorkQueueContract, AgentsRacingOnTheirOwnConnectionsNeverShareAUnit) {
  std::string location = NewLocation();
  ASSERT_FALSE(location.empty());
  Store* setup = OpenAt(location);
  ASSERT_NE(setup, nullptr);
  Prepare(*setup);
  constexpr int kUnits = 60;
  std::vector<WorkUnit> units;
  for (int i = 0; i < kUnits; ++i) units.push_back(Unit(kernel_, Host().Key(), i));
  ASSERT_TRUE(setup->EnqueueUnits(units).has_value());

  constexpr int kAgents = 4;
  std::vector<Store*> handles;
  for (int i = 0; i < kAgents; ++i) handles.push_back(OpenAt(location));
  std::vector<std::vector<int64_t>> claimed(kAgents);
  std::vector<std::string> errors(kAgents);
  std::vector<std::thread> agents;
  for (int i = 0; i < kAgents; ++i) {
    agents.emplace_back([&, i] {
      if (handles[i] == nullptr) return;
      std::string owner = "racer-" + std::to_string(i);
      std::vector<std::string> keys = {Host().Key()};
      while (true) {
        auto unit = handles[i]->ClaimUnit(owner, keys, 60000);
        if (!unit) {
          errors[i] = unit.error().message;
          return;
        }
        if (!unit->has_value()) return;
        claimed[i].push_back((*unit)->id);
        MeasurementRecord m =
            Measured(static_cast<int>((*unit)->sequence), "race-" + std::to_string((*unit)->id));
        Status done = handles[i]->CompleteUnit(LeaseOf(**unit), std::vector{m}, {});
        if (!done) {
          errors[i] = done.error().message;
          return;
        }
      }
    });
  }
  for (std::thread& agent : agents) agent.join();
  std::set<int64_t> distinct;
  size_t total = 0;
  for (int i = 0; i < kAgents; ++i) {
    EXPECT_TRUE(errors[i].empty()) << "agent " << i << ": " << errors[i];
    total += claimed[i].size();
    distinct.insert(claimed[i].begin(), claimed[i].end());
  }
  EXPECT_EQ(total, static_cast<size_t>(kUnits)) << "a unit was claimed twice or never";
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kUnits));
  EXPECT_EQ(MeasurementCount(*setup), kUnits);
  auto counts = setup->CountUnits("sweep-1");
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(counts->done, kUnits);
}

TEST_P(WorkQueueContract, AgentsSeenLatelyAreListedByName) {
  Store* store = NewStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutAgent(Agent("b-agent", "host-b", {"host:b"})).has_value());
  ASSERT_TRUE(store->PutAgent(Agent("a-agent", "host-a", {"host:a", "cuda:sm_90:x"})).has_value());
  ASSERT_TRUE(store->PutAgent(Agent("a-agent", "host-a2", {"host:a"})).has_value());
  auto agents = store->ListAgents(60000);
  ASSERT_TRUE(agents.has_value()) << agents.error().message;
  ASSERT_EQ(agents->size(), 2u);
  EXPECT_EQ(agents->at(0).name, "a-agent");
  EXPECT_EQ(agents->at(0).host, "host-a2");
  EXPECT_EQ(agents->at(0).device_keys, std::vector<std::string>{"host:a"});
  EXPECT_FALSE(store->PutAgent(Agent("", "h", {})).has_value());
}

INSTANTIATE_TEST_SUITE_P(Stores, WorkQueueContract, ::testing::ValuesIn(StoreFactories()),
                         StoreFactoryName);

}  // namespace
}  // namespace tilesmith::db::testing
