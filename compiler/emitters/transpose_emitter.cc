#include "compiler/emitters/transpose_emitter.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/emitters/element_loop.h"

namespace tilesmith::emitters {
namespace {

using analysis::AffineExpr;
using analysis::FusionAnalysis;
using analysis::Interval;
using hlo::HloInstruction;

// The transpose in its normalised form (analysis::TransposeDescription): input dims, which
// input dim each output dim reads, and the two swapped dims the tiles run along.
struct Geometry {
  std::vector<int64_t> input;
  std::vector<int64_t> permutation;  // output dim i is input dim permutation[i]
  int64_t in_dim = 0;                // tiled by tile_in: minor among the swapped in the input
  int64_t out_dim = 0;               // tiled by tile_out: minor among them in the output
  int64_t carried = 1;               // the kept minor dim's size; 1 when the minor dim moves
  bool keeps_minor = false;

  int64_t rank() const { return static_cast<int64_t>(input.size()); }
  bool IsBlockDim(int64_t d) const {
    return d != in_dim && d != out_dim && !(keeps_minor && d == rank() - 1);
  }
};

Geometry GeometryOf(const analysis::TransposeDescription& description) {
  Geometry geometry;
  int64_t rank = static_cast<int64_t>(description.dimensions.size());
  geometry.permutation = description.permutation;
  geometry.input.resize(rank);
  for (int64_t i = 0; i < rank; ++i) {
    geometry.input[description.permutation[i]] = description.dimensions[i];
  }
  geometry.keeps_minor = description.keeps_minor_dimension;
  int64_t tiled = geometry.keeps_minor ? rank - 2 : rank - 1;
  geometry.in_dim = tiled;
  geometry.out_dim = description.permutation[tiled];
  if (geometry.keeps_minor) geometry.carried = geometry.input[rank - 1];
  return geometry;
}

// The distinct transpose heroes, in root order: one shared tile each.
std::vector<const HloInstruction*> TransposeHeroes(const FusionAnalysis& analysis) {
  std::vector<const HloInstruction*> heroes;
  for (const HloInstruction* hero : analysis.heroes) {
    if (analysis::GetTiledTranspose(*hero) &&
        std::find(heroes.begin(), heroes.end(), hero) == heroes.end()) {
      heroes.push_back(hero);
    }
  }
  return heroes;
}

int64_t ElementBytes(hlo::PrimitiveType type) { return std::max(1, (hlo::BitWidth(type) + 7) / 8); }

// Rows along tile_out and columns along tile_in; a packed tile is stored transposed, its
// rows along tile_in, so that phase 2 reads each thread's run of output elements packed.
std::vector<int64_t> SharedDims(const Geometry& geometry, const TransposeConfig& config) {
  if (config.packed) return {config.tile_in, config.tile_out + config.shared_padding};
  std::vector<int64_t> dims = {config.tile_out, config.tile_in + config.shared_padding};
  if (geometry.keeps_minor) dims.push_back(geometry.carried);
  return dims;
}

int64_t SharedBytes(const FusionAnalysis& analysis, const Geometry& geometry,
                    const TransposeConfig& config) {
  int64_t bytes = 0;
  for (const HloInstruction* hero : TransposeHeroes(analysis)) {
    bytes += SharedAlloc{"", hero->shape().element_type(), SharedDims(geometry, config)}.bytes();
  }
  return bytes;
}

// (input dim, count) of the block grid, the fastest first: the tile along tile_in, then
// along tile_out, then the remaining dims from minor to major.
std::vector<std::pair<int64_t, int64_t>> BlockDims(const Geometry& geometry,
                                                   const TransposeConfig& config) {
  std::vector<std::pair<int64_t, int64_t>> dims = {
      {geometry.in_dim, CeilDiv(geometry.input[geometry.in_dim], config.tile_in)},
      {geometry.out_dim, CeilDiv(geometry.input[geometry.out_dim], config.tile_out)}};
  for (int64_t d = geometry.rank() - 1; d >= 0; --d) {
    if (geometry.IsBlockDim(d)) dims.push_back({d, geometry.input[d]});
  }
  return dims;
}

int64_t BlockCount(const Geometry& geometry, const TransposeConfig& config) {
  int64_t blocks = 1;
  for (const auto& [dim, count] : BlockDims(geometry, config)) blocks *= count;
  return blocks;
}

// A normalised index as an index of `shape`: each normalised dim is a run of consecutive
// non-trivial dims of `shape` (row-major within the run); size-1 dims are 0.
Expected<std::vector<AffineExpr>> Denormalize(const hlo::Shape& shape,
                                              std::span<const int64_t> normalized,
                                              std::span<const AffineExpr> index) {
  std::vector<int64_t> non_trivial;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dim(d) != 1) non_trivial.push_back(d);
  }
  return IndexFromMergedDims(shape, non_trivial, normalized, index, "the normalised transpose");
}

bool SameDims(const hlo::Shape& a, const hlo::Shape& b) {
  return std::equal(a.dims().begin(), a.dims().end(), b.dims().begin(), b.dims().end());
}

// Builds the kernel: functions by root, value ids, and the two phases' loops.
class TransposeKernelBuilder {
 public:
  TransposeKernelBuilder(const FusionAnalysis& analysis, const TransposeConfig& config,
                         KernelIR& kernel)
      : analysis_(analysis),
        config_(config),
        geometry_(GeometryOf(*analysis.transpose)),
        kernel_(kernel) {}

  Status Build() {
    std::vector<FusionOutput> outputs = FusionOutputs(analysis_);
    heroes_ = TransposeHeroes(analysis_);
    for (size_t h = 0; h < heroes_.size(); ++h) {
      kernel_.shared.push_back({"tile" + std::to_string(h), heroes_[h]->shape().element_type(),
                                SharedDims(geometry_, config_)});
    }
    kernel_.launch.threads = {config_.threads, 1, 1};
    kernel_.launch.blocks = {BlockCount(geometry_, config_), 1, 1};
    LoopStmt read = Loop(/*first_phase=*/true);
    LoopStmt write = Loop(/*first_phase=*/false);
    // Phase 1: every hero's operand into its tile.
    for (size_t h = 0; h < heroes_.size(); ++h) {
      const HloInstruction* operand = heroes_[h]->operand(0);
      TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> at,
                          Denormalize(operand->shape(), geometry_.input, Normalized()));
      int64_t value = Call(read, operand, at, {});
      read.body.push_back(SharedStoreStmt{static_cast<int64_t>(h), TileIndex(), value});
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      TS_RETURN_IF_ERROR(AddOutput(static_cast<int64_t>(o), outputs[o], read, write));
    }
    kernel_.phases.push_back({{std::move(read)}});
    kernel_.phases.push_back({{std::move(write)}});
    return OkStatus();
  }

 private:
  // A side output is written in phase 1 at the input's elements; a transposed one in
  // phase 2, its hero's element coming from the tile and the epilogue computing the root.
  Status AddOutput(int64_t position, const FusionOutput& output, LoopStmt& read, LoopStmt& write) {
    if (output.leaf >= 0) {
      return Unimplemented("output '" + output.root->name() +
                           "' is a tuple leaf; the transpose emitter writes array roots");
    }
    const HloInstruction* hero = analysis_.heroes[position];
    auto tile = std::find(heroes_.begin(), heroes_.end(), hero);
    bool transposed = tile != heroes_.end();
    const hlo::Shape& from = transposed ? hero->shape() : heroes_.front()->operand(0)->shape();
    if (from.ElementCount() != output.shape->ElementCount()) {
      return Unimplemented("output '" + output.root->name() + "' has " +
                           std::to_string(output.shape->ElementCount()) +
                           " elements, the tiled transpose " + std::to_string(from.ElementCount()));
    }
    int64_t buffer = kernel_.OutputBuffer(position);
    if (!transposed) {
      TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> at,
                          Denormalize(from, geometry_.input, Normalized()));
      TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> root_at,
                          ReinterpretIndex(from, *output.shape, at));
      read.body.push_back(StoreStmt{buffer, root_at, Call(read, output.root, root_at, {})});
      return OkStatus();
    }
    std::vector<int64_t> output_dims;
    for (int64_t dim : geometry_.permutation) output_dims.push_back(geometry_.input[dim]);
    TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> hero_at,
                        Denormalize(hero->shape(), output_dims, Normalized()));
    // Bound where the epilogue reads it: after the reshapes under its elementwise ops.
    const HloInstruction* target = BindingTarget(output.root, hero);
    TS_ASSIGN_OR_RETURN(std::vector<AffineExpr> target_at,
                        ReinterpretIndex(hero->shape(), target->shape(), hero_at));
    std::vector<AffineExpr> root_at = target_at;
    if (!SameDims(target->shape(), *output.shape)) {
      TS_ASSIGN_OR_RETURN(root_at, ReinterpretIndex(hero->shape(), *output.shape, hero_at));
    }
    int64_t loaded = next_value_++;
    write.body.push_back(SharedLoadStmt{tile - heroes_.begin(), TileIndex(), loaded});
    int64_t value = Call(write, output.root, root_at, {ValueBinding{target, target_at, loaded}});
    write.body.push_back(StoreStmt{buffer, root_at, value});
    return OkStatus();
  }

  // The normalised input (phase 1) or output (phase 2) index: the loops' first results.
  std::span<const AffineExpr> Normalized() const {
    return {index_.data(), static_cast<size_t>(geometry_.rank())};
  }

  // Loop results: the normalised input index (phase 1) or output index (phase 2), then the
  // tile coordinates (row along tile_out, column along tile_in, carried element).
  // Packed, phase 1 reads `vector` consecutive rows per pass (symbol 2): a thread holds a
  // vector x vector sub-tile, whose columns it stores as the packed tile's rows.
  LoopStmt Loop(bool first_phase) {
    const TransposeConfig& c = config_;
    int64_t rank = geometry_.rank();
    int64_t columns = (first_phase ? c.tile_in : c.tile_out) * geometry_.carried / c.vector;
    int64_t rows = c.threads / columns;
    int64_t tile_rows = first_phase ? c.tile_out : c.tile_in;
    int64_t sub_rows = c.packed && first_phase ? c.vector : 1;
    AffineExpr thread = AffineExpr::Dim(kThreadIdX);
    AffineExpr column = thread.Mod(columns) * c.vector + AffineExpr::Symbol(1);
    AffineExpr row = thread.FloorDiv(columns) + AffineExpr::Symbol(0) * rows;
    if (sub_rows > 1) row = row * sub_rows + AffineExpr::Symbol(2);
    int64_t carried = geometry_.carried;
    AffineExpr along = carried == 1 ? column : column.FloorDiv(carried);
    AffineExpr element = carried == 1 ? AffineExpr::Constant(0) : column.Mod(carried);
    AffineExpr in_local = first_phase ? along : row;
    AffineExpr out_local = first_phase ? row : along;

    std::vector<AffineExpr> input(rank, AffineExpr::Constant(0));
    AffineExpr block = AffineExpr::Dim(kBlockIdX);
    int64_t stride = 1;
    for (const auto& [dim, count] : BlockDims(geometry_, c)) {
      AffineExpr coordinate = (stride == 1 ? block : block.FloorDiv(stride)).Mod(count);
      stride *= count;
      if (dim == geometry_.in_dim) {
        input[dim] = coordinate * c.tile_in + in_local;
      } else if (dim == geometry_.out_dim) {
        input[dim] = coordinate * c.tile_out + out_local;
      } else {
        input[dim] = coordinate;
      }
    }
    if (geometry_.keeps_minor) input[rank - 1] = element;
    std::vector<AffineExpr> results;
    for (int64_t i = 0; i < rank; ++i) {
      results.push_back(first_phase ? input[i] : input[geometry_.permutation[i]]);
    }
    results.push_back(out_local);
    results.push_back(in_local);
    results.push_back(element);

    std::vector<Interval> dims = {Interval::ForSize(c.threads), Interval::Point(0),
                                  Interval::Point(0),           Interval::ForSize(stride),
                                  Interval::Point(0),           Interval::Point(0)};
    std::vector<analysis::SymbolVar> symbols = {
        {Interval::ForSize(CeilDiv(tile_rows, rows * sub_rows))}, {Interval::ForSize(c.vector)}};
    if (sub_rows > 1) symbols.push_back({Interval::ForSize(sub_rows)});
    // Partial tiles: rows past the tile, and elements past the swapped dims' ends.
    std::vector<analysis::Constraint> constraints = {
        {row, Interval::ForSize(tile_rows)},
        {input[geometry_.in_dim], Interval::ForSize(geometry_.input[geometry_.in_dim])},
        {input[geometry_.out_dim], Interval::ForSize(geometry_.input[geometry_.out_dim])}};
    analysis::IndexingMap map(dims, symbols, results, constraints);
    map.Simplify();
    index_.clear();
    for (int64_t i = 0; i < static_cast<int64_t>(results.size()); ++i) {
      index_.push_back(AffineExpr::Dim(i));
    }
    LoopStmt loop{std::move(map), {}};
    if (sub_rows > 1) loop.register_transpose = LoopStmt::RegisterTranspose{1, 2};
    return loop;
  }

  // The shared tile's index at the loop's tile coordinates (SharedDims' order).
  std::vector<AffineExpr> TileIndex() const {
    int64_t rank = geometry_.rank();
    if (config_.packed) return {index_[rank + 1], index_[rank]};
    int64_t coordinates = geometry_.keeps_minor ? 3 : 2;
    return std::vector<AffineExpr>(index_.begin() + rank, index_.begin() + rank + coordinates);
  }

  // `%v = call @root(at) [with bindings]`; returns the value id.
  int64_t Call(LoopStmt& loop, const HloInstruction* root, std::vector<AffineExpr> at,
               std::vector<ValueBinding> bindings) {
    auto [it, added] = function_of_.emplace(root, static_cast<int64_t>(kernel_.functions.size()));
    if (added) kernel_.functions.push_back({root->name(), {root}, OperandClosure(root)});
    int64_t value = next_value_++;
    loop.body.push_back(CallStmt{it->second, std::move(at), value, std::move(bindings)});
    return value;
  }

  const FusionAnalysis& analysis_;
  const TransposeConfig& config_;
  Geometry geometry_;
  KernelIR& kernel_;
  std::vector<AffineExpr> index_;
  std::vector<const HloInstruction*> heroes_;
  std::unordered_map<const HloInstruction*, int64_t> function_of_;
  int64_t next_value_ = 0;
};

}  // namespace

nlohmann::json TransposeConfig::ToJson() const {
  nlohmann::json json = {
      {"tile_in", tile_in}, {"tile_out", tile_out}, {"rows_per_pass", rows_per_pass},
      {"threads", threads}, {"vector", vector},     {"shared_padding", shared_padding}};
  if (packed) json["packed"] = true;
  return json;
}

Expected<TransposeConfig> TransposeConfig::FromJson(const nlohmann::json& json,
                                                    const TransposeConfig& base) {
  if (!json.is_object()) return InvalidArgument("a transpose config is a JSON object");
  TransposeConfig config = base;
  const std::vector<std::pair<const char*, int64_t TransposeConfig::*>> fields = {
      {"tile_in", &TransposeConfig::tile_in},
      {"tile_out", &TransposeConfig::tile_out},
      {"rows_per_pass", &TransposeConfig::rows_per_pass},
      {"threads", &TransposeConfig::threads},
      {"vector", &TransposeConfig::vector},
      {"shared_padding", &TransposeConfig::shared_padding}};
  for (const auto& [key, value] : json.items()) {
    if (key == "packed") {
      if (!value.is_boolean())
        return InvalidArgument("transpose config field 'packed' is true or false");
      config.packed = value.get<bool>();
      continue;
    }
    auto field = std::find_if(fields.begin(), fields.end(),
                              [&](const auto& entry) { return key == entry.first; });
    if (field == fields.end()) {
      return InvalidArgument("unknown transpose config field '" + key +
                             "' (tile_in, tile_out, rows_per_pass, threads, vector, "
                             "shared_padding, packed)");
    }
    if (!value.is_number_integer()) {
      return InvalidArgument("transpose config field '" + key + "' must be an integer");
    }
    config.*(field->second) = value.get<int64_t>();
  }
  return config;
}

TransposeConfig DefaultTransposeConfig(const FusionAnalysis& analysis, const DeviceInfo& device) {
  TransposeConfig config;
  if (!analysis.transpose) return config;
  Geometry geometry = GeometryOf(*analysis.transpose);
  int64_t widest = 1;
  int64_t elements = 0;
  for (const HloInstruction* hero : TransposeHeroes(analysis)) {
    widest = std::max(widest, ElementBytes(hero->shape().element_type()));
  }
  for (const FusionOutput& output : FusionOutputs(analysis)) {
    widest = std::max(widest, ElementBytes(output.shape->element_type()));
    elements = std::max(elements, output.shape->ElementCount());
  }
  int64_t vector = std::max<int64_t>(1, 4 / widest);
  bool divides = geometry.input[geometry.in_dim] % config.tile_in == 0 &&
                 geometry.input[geometry.out_dim] % config.tile_out == 0;
  if (!divides || elements < device.threads_per_sm * device.sm_count) vector = 1;
  // Both phases' rows must hold whole vectors, and a block whole warps.
  auto set_vector = [&](int64_t v) {
    config.vector = v;
    int64_t columns = config.tile_in * geometry.carried / v;
    config.rows_per_pass = 1;
    while (columns * config.rows_per_pass * 2 <= 128) config.rows_per_pass *= 2;
    config.threads = columns * config.rows_per_pass;
  };
  set_vector(vector);
  if (!ValidateTransposeConfig(config, analysis, device)) set_vector(1);
  return config;
}

namespace {

Status ValidatePacked(const TransposeConfig& config, const Geometry& geometry) {
  if (geometry.keeps_minor) {
    return InvalidArgument(
        "packed needs a transpose that moves the minor dim; this one keeps it "
        "and already reads and writes it whole");
  }
  if (config.vector < 2) return InvalidArgument("packed needs vector >= 2, not 1");
  if (config.shared_padding % config.vector != 0) {
    return InvalidArgument(
        "packed needs shared_padding a multiple of vector=" + std::to_string(config.vector) +
        " (whole packed runs), not " + std::to_string(config.shared_padding));
  }
  return OkStatus();
}

}  // namespace

Status ValidateTransposeConfig(const TransposeConfig& config, const FusionAnalysis& analysis,
                               const DeviceInfo& device) {
  if (!analysis.transpose) {
    return MakeError(ErrorCode::kFailedPrecondition, "the fusion has no tiled transpose hero");
  }
  nlohmann::json fields = config.ToJson();
  for (const auto& [key, value] : fields.items()) {
    if (!value.is_number_integer()) continue;
    int64_t lowest = key == "shared_padding" ? 0 : 1;
    if (value.get<int64_t>() < lowest) {
      return InvalidArgument(key + "=" + value.dump() + " must be at least " +
                             std::to_string(lowest));
    }
  }
  if (config.vector != 1 && config.vector != 2 && config.vector != 4 && config.vector != 8) {
    return InvalidArgument("vector=" + std::to_string(config.vector) + " is not 1, 2, 4 or 8");
  }
  Geometry geometry = GeometryOf(*analysis.transpose);
  if (config.packed) TS_RETURN_IF_ERROR(ValidatePacked(config, geometry));
  int64_t in_row = config.tile_in * geometry.carried;
  int64_t out_row = config.tile_out * geometry.carried;
  if (in_row % config.vector != 0 || out_row % config.vector != 0) {
    return InvalidArgument("vector=" + std::to_string(config.vector) +
                           " does not divide the tile rows of " + std::to_string(in_row) + " and " +
                           std::to_string(out_row) + " elements");
  }
  int64_t threads = in_row / config.vector * config.rows_per_pass;
  if (config.threads != threads) {
    return InvalidArgument(
        "threads=" + std::to_string(config.threads) +
        " must be tile_in x carried / vector x rows_per_pass = " + std::to_string(threads));
  }
  if (config.threads > device.max_threads_per_block) {
    return InvalidArgument("threads=" + std::to_string(config.threads) + " is over the limit " +
                           std::to_string(device.max_threads_per_block));
  }
  if (config.threads % device.warp_size != 0) {
    return InvalidArgument("threads=" + std::to_string(config.threads) +
                           " is not a multiple of the warp size " +
                           std::to_string(device.warp_size));
  }
  if (config.threads % (out_row / config.vector) != 0) {
    return InvalidArgument("threads=" + std::to_string(config.threads) +
                           " do not cover whole output tile rows of " +
                           std::to_string(out_row / config.vector) + " vectors");
  }
  int64_t shared = SharedBytes(analysis, geometry, config);
  if (shared > device.shared_memory_per_block) {
    return InvalidArgument("shared memory of " + std::to_string(shared) +
                           " bytes is over the device limit " +
                           std::to_string(device.shared_memory_per_block));
  }
  int64_t blocks = BlockCount(geometry, config);
  if (blocks > device.max_grid_x) {
    return InvalidArgument(std::to_string(blocks) + " blocks are over the grid limit " +
                           std::to_string(device.max_grid_x));
  }
  return OkStatus();
}

Expected<KernelIR> EmitTransposeKernel(const FusionAnalysis& analysis,
                                       const TransposeConfig& config, const DeviceInfo& device) {
  TS_RETURN_IF_ERROR(ValidateTransposeConfig(config, analysis, device));
  KernelIR kernel;
  kernel.name = analysis.fusion->name();
  kernel.fusion = analysis.fusion;
  kernel.emitter = "transpose";
  kernel.config_json = config.ToJson().dump();
  AddFusionBuffers(analysis, kernel);
  TransposeKernelBuilder builder(analysis, config, kernel);
  TS_RETURN_IF_ERROR(builder.Build());
  return kernel;
}

namespace {

class TransposeEmitter final : public Emitter {
 public:
  std::string_view name() const override { return "transpose"; }
  std::span<const ConfigField> config_fields() const override {
    // `packed` (set only where the kernel packs sub-byte values) has been no column since
    // the first feature schema; a column for it needs a new schema version.
    static constexpr ConfigField kFields[] = {{"tile_in"},
                                              {"tile_out"},
                                              {"rows_per_pass"},
                                              {"threads"},
                                              {"vector"},
                                              {"shared_padding"},
                                              {"packed", FeatureEncoding::kNone}};
    return kFields;
  }

  nlohmann::json DefaultConfig(const FusionAnalysis& analysis,
                               const DeviceInfo& device) const override {
    return DefaultTransposeConfig(analysis, device).ToJson();
  }

  Status Validate(const FusionAnalysis& analysis, const nlohmann::json& config,
                  const DeviceInfo& device) const override {
    TS_ASSIGN_OR_RETURN(TransposeConfig transpose, Read(analysis, config, device));
    return ValidateTransposeConfig(transpose, analysis, device);
  }

  Expected<KernelIR> Emit(const FusionAnalysis& analysis, const nlohmann::json& config,
                          const DeviceInfo& device) const override {
    TS_ASSIGN_OR_RETURN(TransposeConfig transpose, Read(analysis, config, device));
    return EmitTransposeKernel(analysis, transpose, device);
  }

  std::vector<SpaceEntry> Space(const FusionAnalysis& analysis,
                                const DeviceInfo& device) const override {
    std::vector<SpaceEntry> space;
    TransposeConfig base = DefaultTransposeConfig(analysis, device);
    int64_t carried = analysis.transpose ? GeometryOf(*analysis.transpose).carried : 1;
    auto add = [&](int64_t tile_in, int64_t tile_out, int64_t rows, int64_t vector, int64_t padding,
                   bool packed) {
      TransposeConfig config = base;
      config.tile_in = tile_in;
      config.tile_out = tile_out;
      config.rows_per_pass = rows;
      config.vector = vector;
      config.shared_padding = padding;
      config.packed = packed;
      config.threads = tile_in * carried / vector * rows;
      Status valid = ValidateTransposeConfig(config, analysis, device);
      space.push_back({config.ToJson(), valid ? "" : valid.error().message});
    };
    for (int64_t tile_in : {16, 32, 64}) {
      for (int64_t tile_out : {16, 32, 64}) {
        for (int64_t rows : {1, 2, 4, 8}) {
          for (int64_t vector : {1, 2, 4}) {
            for (int64_t padding : {0, 1}) add(tile_in, tile_out, rows, vector, padding, false);
          }
        }
      }
    }
    // Packed variants come after, so that the configs above keep their order.
    for (int64_t tile_in : {32, 64}) {
      for (int64_t tile_out : {32, 64}) {
        for (int64_t rows : {1, 2, 4, 8}) {
          for (int64_t vector : {2, 4}) {
            for (int64_t padding : {int64_t{0}, vector}) {
              add(tile_in, tile_out, rows, vector, padding, true);
            }
          }
        }
      }
    }
    return space;
  }

 private:
  static Expected<TransposeConfig> Read(const FusionAnalysis& analysis,
                                        const nlohmann::json& config, const DeviceInfo& device) {
    TransposeConfig base = DefaultTransposeConfig(analysis, device);
    if (config.is_null()) return base;
    return TransposeConfig::FromJson(config, base);
  }
};

}  // namespace

std::unique_ptr<Emitter> MakeTransposeEmitter() { return std::make_unique<TransposeEmitter>(); }

}  // namespace tilesmith::emitters
