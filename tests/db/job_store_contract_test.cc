// The jobs role on every store (store_factories.h): round trips, state filters, counts,
// validation.
#include <gtest/gtest.h>

#include "db/jobs.h"
#include "tests/db/store_factories.h"

namespace tilesmith::db::testing {
namespace {

JobRecord Job(const std::string& name, JobState state) {
  JobRecord job;
  job.id = NewUid();
  job.dedupe_key = "key-" + name;
  job.state = state;
  job.fingerprint = *Sha256Hex(name);
  job.device_key = Host().Key();
  job.compiler_version = "tilesmith-test";
  job.target = "host";
  job.source_format = "hlo";
  job.fusion_text = "ENTRY e { ROOT p = f32[4] parameter(0) }";
  job.options = {{"budget", 3}, {"strategy", "exhaustive"}};
  return job;
}

class JobStoreContract : public StoreContractTest {};

TEST_P(JobStoreContract, PutGetRoundTripsAndUpdatesInPlace) {
  Store* store = NewStore();
  JobRecord job = Job("gelu", JobState::kQueued);
  ASSERT_TRUE(store->PutJob(job).has_value());
  auto read = store->GetJob(job.id);
  ASSERT_TRUE(read.has_value()) << read.error().message;
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->fusion_text, job.fusion_text);
  EXPECT_EQ((*read)->options, job.options);
  EXPECT_TRUE((*read)->result.is_null());
  EXPECT_FALSE((*read)->created_at.empty());
  std::string created = (*read)->created_at;

  job.state = JobState::kDone;
  job.progress = {{"measured", 3}};
  job.result = {{"best", {{"median_us", 1.5}}}};
  ASSERT_TRUE(store->PutJob(job).has_value());
  read = store->GetJob(job.id);
  ASSERT_TRUE(read.has_value() && read->has_value());
  EXPECT_EQ((*read)->state, JobState::kDone);
  EXPECT_EQ((*read)->progress["measured"], 3);
  EXPECT_EQ((*read)->result["best"]["median_us"], 1.5);
  EXPECT_EQ((*read)->created_at, created) << "the first write's time is kept";
  EXPECT_EQ((*read)->unfinished_runs, 0);
  job.unfinished_runs = 2;
  ASSERT_TRUE(store->PutJob(job).has_value());
  EXPECT_EQ((*store->GetJob(job.id))->unfinished_runs, 2);
  EXPECT_EQ(store->ListJobs({})->size(), 1u);
  EXPECT_FALSE(store->GetJob(NewUid())->has_value());
}

TEST_P(JobStoreContract, AnUpdateOfAnActiveJobNeverOverwritesAFinalState) {
  Store* store = NewStore();
  JobRecord job = Job("softmax", JobState::kQueued);
  ASSERT_TRUE(store->PutJob(job).has_value());
  job.state = JobState::kRunning;
  job.progress = {{"measured", 2}};
  auto updated = store->UpdateActiveJob(job);
  ASSERT_TRUE(updated.has_value()) << updated.error().message;
  EXPECT_TRUE(*updated);
  auto read = store->GetJob(job.id);
  ASSERT_TRUE(read.has_value() && read->has_value());
  EXPECT_EQ((*read)->state, JobState::kRunning);
  EXPECT_EQ((*read)->progress["measured"], 2);
  EXPECT_EQ((*read)->fusion_text, job.fusion_text) << "fields the update does not own changed";

  JobRecord cancelled = job;
  cancelled.state = JobState::kCancelled;
  ASSERT_TRUE(store->UpdateActiveJob(cancelled).value_or(false));
  job.progress = {{"measured", 4}};
  job.result = {{"best", {{"median_us", 2.5}}}};
  updated = store->UpdateActiveJob(job);
  ASSERT_TRUE(updated.has_value());
  EXPECT_FALSE(*updated) << "a late update overwrote the cancellation";
  read = store->GetJob(job.id);
  EXPECT_EQ((*read)->state, JobState::kCancelled);
  EXPECT_EQ((*read)->progress["measured"], 2);
  EXPECT_TRUE((*read)->result.is_null());
  JobRecord unknown = Job("nobody", JobState::kRunning);
  EXPECT_FALSE(store->UpdateActiveJob(unknown).value_or(true));
}

TEST_P(JobStoreContract, ListFiltersByStateOldestFirstAndCountsEveryState) {
  Store* store = NewStore();
  ASSERT_TRUE(store->PutJob(Job("a", JobState::kQueued)).has_value());
  ASSERT_TRUE(store->PutJob(Job("b", JobState::kRunning)).has_value());
  ASSERT_TRUE(store->PutJob(Job("c", JobState::kDone)).has_value());
  ASSERT_TRUE(store->PutJob(Job("d", JobState::kQueued)).has_value());
  std::vector<JobState> active = {JobState::kQueued, JobState::kRunning};
  auto jobs = store->ListJobs(active);
  ASSERT_TRUE(jobs.has_value()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].dedupe_key, "key-a");
  EXPECT_EQ((*jobs)[2].dedupe_key, "key-d");
  auto counts = store->CountJobs();
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(counts->at("queued"), 2);
  EXPECT_EQ(counts->at("running"), 1);
  EXPECT_EQ(counts->at("done"), 1);
  EXPECT_EQ(counts->at("cancelled"), 0);
}

TEST_P(JobStoreContract, BadJobsAreRefusedNamingTheField) {
  Store* store = NewStore();
  JobRecord job = Job("x", JobState::kQueued);
  job.id = "not-hex";
  auto refused = store->PutJob(job);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("job id"), std::string::npos);
  job = Job("x", JobState::kQueued);
  job.source_format = "onnx";
  EXPECT_FALSE(store->PutJob(job).has_value());
  EXPECT_TRUE(store->ListJobs({})->empty());
  EXPECT_FALSE(ParseJobState("paused").has_value());
}

INSTANTIATE_TEST_SUITE_P(Stores, JobStoreContract, ::testing::ValuesIn(StoreFactories()),
                         StoreFactoryName);

}  // namespace
}  // namespace tilesmith::db::testing
