// Export/import: a round trip loses nothing, importing twice adds nothing, and a document
// of another schema version or with broken references is refused before anything is written.
#include <gtest/gtest.h>

#include <limits>

#include "db/export.h"
#include "db/verdicts.h"
#include "tests/db/store_factories.h"

namespace tilesmith::db {
namespace {

using nlohmann::json;
using testing::Failure;
using testing::H100;
using testing::Host;
using testing::Kernel;
using testing::StoreFactories;
using testing::StoreFactoryName;
using testing::Trial;

class ExportContract : public testing::StoreContractTest {
 protected:
  void SetUp() override {
    StoreContractTest::SetUp();
    if (IsSkipped()) return;
    source_ = NewStore();
    target_ = NewStore();
    ASSERT_TRUE(source_ && target_);
    for (const DeviceRecord& device : {H100(), Host()}) ASSERT_TRUE(source_->PutDevice(device));
    for (const KernelRecord& kernel : {gelu_, softmax_, unmeasured_}) {
      ASSERT_TRUE(source_->PutKernel(kernel));
    }
    MeasurementRecord default_trial = Trial(gelu_, H100(), {{"v", 4}}, 10);
    default_trial.is_default = true;
    default_trial.job_id = "job-1";
    MeasurementRecord timed_failure = Trial(gelu_, H100(), {{"v", 5}}, 1);
    timed_failure.status = TrialStatus::kWrongResult;
    timed_failure.message = "max error 0.5 at out0[3]";
    timed_failure.verification_error = 0.5;
    auto batch = source_->RecordBatch(std::vector<MeasurementRecord>{
        default_trial, Trial(gelu_, H100(), {{"v", 8}, {"tile", {2, 64}}}, 4), timed_failure,
        Failure(gelu_, H100(), {{"v", 16}}, TrialStatus::kCompile, "too many registers"),
        Trial(softmax_, Host(), {{"rows", 2}}, 70, "tilesmith-test-2")});
    ASSERT_TRUE(batch.has_value()) << batch.error().message;
  }

  // Drops what differs between two exports of the same content.
  static json Comparable(json document) {
    document.erase("exported_at");
    return document;
  }

  Store* source_ = nullptr;
  Store* target_ = nullptr;
  KernelRecord gelu_ = Kernel("gelu");
  KernelRecord softmax_ = Kernel("softmax");
  KernelRecord unmeasured_ = Kernel("unmeasured");
};

TEST_P(ExportContract, TheDocumentIsVersionedAndComplete) {
  auto document = ExportResults(*source_);
  ASSERT_TRUE(document.has_value()) << document.error().message;
  EXPECT_EQ((*document)["format"], "tilesmith-results");
  EXPECT_EQ((*document)["schema_version"], kSchemaVersion);
  EXPECT_EQ((*document)["compiler_versions"], json({"tilesmith-test-1", "tilesmith-test-2"}));
  EXPECT_EQ((*document)["devices"].size(), 2u);
  EXPECT_EQ((*document)["kernels"].size(), 3u) << "unmeasured kernels travel too";
  EXPECT_EQ((*document)["configs"].size(), 5u);
  ASSERT_EQ((*document)["measurements"].size(), 5u);
  const json& first = (*document)["measurements"][0];
  EXPECT_EQ(first["is_default"], true);
  EXPECT_EQ(first["median_us"], 10);
  EXPECT_EQ(first["job_id"], "job-1");
  EXPECT_FALSE((*document)["measurements"][3].contains("median_us")) << "never timed";
  EXPECT_TRUE((*document)["measurements"][3]["verification_error"].is_null());
}

TEST_P(ExportContract, ARoundTripLosesNothing) {
  auto exported = ExportResults(*source_);
  ASSERT_TRUE(exported.has_value());
  // Through text, as a file would carry it.
  json reread = json::parse(exported->dump());
  auto summary = ImportResults(*target_, reread);
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  EXPECT_EQ(summary->devices_added, 2);
  EXPECT_EQ(summary->kernels_added, 3);
  EXPECT_EQ(summary->measurements_added, 5);
  EXPECT_EQ(summary->measurements_present, 0);
  EXPECT_EQ(*target_->Measurements({}), *source_->Measurements({}));
  EXPECT_EQ(target_->ListKernels({})->size(), 3u);
  EXPECT_EQ(Comparable(*ExportResults(*target_)), Comparable(*exported));
  auto best = target_->Best({gelu_.fingerprint, H100().Key(), "tilesmith-test-1"});
  ASSERT_TRUE(best.has_value() && best->has_value());
  EXPECT_EQ((*best)->measurement.timing->median_us, 4);
  EXPECT_EQ((*best)->default_median_us, 10);
}

TEST_P(ExportContract, TheNewestVerdictOfEachKeyTravelsOnceAndAnswersAlike) {
  VerdictRecord verdict;
  verdict.key = {gelu_.fingerprint, H100().Key(), "tilesmith-test-1"};
  verdict.best_config = {{"v", 8}, {"tile", {2, 64}}};
  verdict.chosen_config = verdict.best_config;
  verdict.chosen_median_us = 4;
  verdict.default_median_us = 10;
  verdict.speedup = 2.5;
  verdict.speedup_low = 2.2;
  verdict.speedup_high = std::numeric_limits<double>::infinity();
  verdict.significant = true;
  verdict.rounds = 1;
  verdict.method = "paired t on log ratios";
  verdict.reason = "faster than the default";
  verdict.details = {{"rounds", json::array({{{"order", {1, 0}}}})}};
  verdict.decided_at = "2026-11-28T10:00:00.000Z";
  VerdictRecord older = verdict;
  older.decided_at = "2026-11-27T10:00:00.000Z";
  older.significant = false;
  older.speedup_low = 0.9;
  older.speedup_high = 1.1;
  ASSERT_TRUE(source_->RecordVerdict(older).has_value());
  ASSERT_TRUE(source_->RecordVerdict(verdict).has_value());
  json exported = json::parse(ExportResults(*source_)->dump());
  ASSERT_EQ(exported["verdicts"].size(), 1u) << "only the newest verdict of the key";
  EXPECT_TRUE(exported["verdicts"][0]["speedup_high"].is_null());
  auto summary = ImportResults(*target_, exported);
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  EXPECT_EQ(summary->verdicts_added, 1);
  std::vector<ResultKey> keys = {verdict.key};
  auto moved = target_->Verdicts(keys);
  auto original = source_->Verdicts(keys);
  ASSERT_TRUE(moved.has_value() && original.has_value());
  ASSERT_TRUE(moved->front().has_value());
  VerdictRecord a = *moved->front(), b = *original->front();
  a.id = b.id = 0;
  EXPECT_EQ(a, b);
  EXPECT_EQ(VerdictJson(a), VerdictJson(b));
  auto again = ImportResults(*target_, exported);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->verdicts_added, 0);
  EXPECT_EQ(again->verdicts_present, 1);
  json broken = exported;
  broken["verdicts"][0].erase("decided_at");
  auto refused = ImportResults(*NewStore(), broken);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("verdicts[0].decided_at"), std::string::npos)
      << refused.error().message;
}

TEST_P(ExportContract, ImportingTwiceAddsNothing) {
  json exported = *ExportResults(*source_);
  ASSERT_TRUE(ImportResults(*target_, exported).has_value());
  auto again = ImportResults(*target_, exported);
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(again->devices_added, 0);
  EXPECT_EQ(again->kernels_added, 0);
  EXPECT_EQ(again->measurements_added, 0);
  EXPECT_EQ(again->measurements_present, 5);
  EXPECT_EQ(target_->Stats()->measurements, 5);
  // Importing into the database it came from adds nothing either.
  auto home = ImportResults(*source_, exported);
  ASSERT_TRUE(home.has_value());
  EXPECT_EQ(home->measurements_added, 0);
}

TEST_P(ExportContract, ImportMergesWithWhatIsThere) {
  ASSERT_TRUE(target_->PutDevice(H100()));
  ASSERT_TRUE(target_->PutKernel(gelu_));
  ASSERT_TRUE(target_->RecordBatch(std::vector{Trial(gelu_, H100(), {{"v", 4}}, 3)}));
  auto summary = ImportResults(*target_, *ExportResults(*source_));
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  EXPECT_EQ(summary->devices_added, 1);
  EXPECT_EQ(summary->kernels_added, 2);
  EXPECT_EQ(target_->Stats()->measurements, 6);
  auto best = target_->Best({gelu_.fingerprint, H100().Key(), "tilesmith-test-1"});
  EXPECT_EQ((*best)->measurement.timing->median_us, 3) << "the local trial is still the best";
}

TEST_P(ExportContract, AFilteredExportCarriesOnlyWhatItNeeds) {
  auto exported = ExportResults(*source_, {.device_key = Host().Key()});
  ASSERT_TRUE(exported.has_value());
  EXPECT_EQ((*exported)["devices"].size(), 1u);
  EXPECT_EQ((*exported)["kernels"].size(), 1u);
  EXPECT_EQ((*exported)["measurements"].size(), 1u);
  EXPECT_EQ((*exported)["compiler_versions"], json({"tilesmith-test-2"}));
  auto summary = ImportResults(*target_, *exported);
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  EXPECT_EQ(summary->measurements_added, 1);
}

TEST_P(ExportContract, AnotherSchemaVersionIsRefusedNamingBoth) {
  json exported = *ExportResults(*source_);
  exported["schema_version"] = kSchemaVersion + 1;
  auto refused = ImportResults(*target_, exported);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("schema version " + std::to_string(kSchemaVersion + 1)),
            std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("is version " + std::to_string(kSchemaVersion)),
            std::string::npos)
      << refused.error().message;
  EXPECT_EQ(target_->Stats()->devices, 0) << "nothing was written";

  exported["schema_version"] = 0;
  EXPECT_FALSE(ImportResults(*target_, exported).has_value());
  exported.erase("schema_version");
  EXPECT_FALSE(ImportResults(*target_, exported).has_value());
}

TEST_P(ExportContract, BrokenDocumentsChangeNothing) {
  json good = *ExportResults(*source_);
  auto expect_refused = [&](json document, const std::string& fragment) {
    auto result = ImportResults(*target_, document);
    ASSERT_FALSE(result.has_value()) << "accepted a document that should fail with: " << fragment;
    EXPECT_NE(result.error().message.find(fragment), std::string::npos) << result.error().message;
    EXPECT_EQ(target_->Stats()->devices, 0);
    EXPECT_EQ(target_->Stats()->kernels, 0);
  };
  json wrong_format = good;
  wrong_format["format"] = "xla-autotune-cache";
  expect_refused(wrong_format, "not a tilesmith results export");
  expect_refused(json::array(), "must be a JSON object");

  json tampered_config = good;
  tampered_config["configs"][0]["config"]["v"] = 1024;
  expect_refused(tampered_config, "configs[0].config_hash");

  json tampered_kernel = good;
  tampered_kernel["kernels"][1]["canonical_text"] = "something else";
  expect_refused(tampered_kernel, "kernels[1]");

  json tampered_device = good;
  tampered_device["devices"][0]["cores"] = 200;
  expect_refused(tampered_device, "devices[0].key");

  json bad_status = good;
  bad_status["measurements"][4]["status"] = "flaky";
  expect_refused(bad_status, "measurements[4].status: unknown trial status 'flaky'");

  json missing_config = good;
  missing_config["configs"].erase(0);
  expect_refused(missing_config, "is not in the document's configs");

  json missing_device = good;
  missing_device["devices"] = json::array();
  expect_refused(missing_device, "is neither in the document nor in the store");

  json wrong_type = good;
  wrong_type["measurements"][0]["median_us"] = "fast";
  expect_refused(wrong_type, "measurements[0].median_us: expected a number");
}

INSTANTIATE_TEST_SUITE_P(Stores, ExportContract, ::testing::ValuesIn(StoreFactories()),
                         StoreFactoryName);

}  // namespace
}  // namespace tilesmith::db
