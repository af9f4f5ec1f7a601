// oomlint's stand-in for LibTorch's <torch/torch.h>.
//
// Parsing the real LibTorch headers takes Clang seconds per file. oomlint's rules only need calls to
// resolve to their qualified names (torch::zeros, at::Tensor::backward, torch::nn::Module ...), the
// parameter names of the calls they read (retain_graph, set_to_none, device), and enough types for
// Clang to pick the right overloads. This header declares that surface, in the same namespaces as
// LibTorch, so that a training file analysed without its build flags lowers the same way as with them.
// Nothing here is ever compiled into a program: declarations only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

// A member a checked file uses that these declarations lack (an options setter, a newer Tensor
// method; a name that occurs nowhere in this file): the front end parses such a file again with that name
// defined to this catch-all (cpp/standins.h), so the expression keeps its type and what is built
// on it is still lowered. It takes anything and gives back the object's own type.
#define OOMLINT_MISSING_MEMBER(Self)                                   \
  template <class... A> Self& oomlint_missing_member(A&&...);          \
  Self& oomlint_missing_member(std::initializer_list<int64_t> values);

namespace c10 {
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 2 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
enum class ScalarType : int8_t { Byte, Char, Short, Int, Long, Half, Float, Double, Bool, BFloat16 };
template <class T> using optional = std::optional<T>;
using nullopt_t = std::nullopt_t;
constexpr std::nullopt_t nullopt = std::nullopt;
enum class Layout : int8_t { Strided, Sparse };
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast };

struct Device {
  Device(DeviceType type, int8_t index = -1);
  Device(const std::string& device_string);
  Device(const char* device_string);
  bool is_cuda() const;
  bool is_cpu() const;
  DeviceType type() const;
  int8_t index() const;
  std::string str() const;
};

struct Scalar {
  Scalar(int v);
  Scalar(long v);
  Scalar(long long v);
  Scalar(unsigned long v);
  Scalar(float v);
  Scalar(double v);
  Scalar(bool v);
  template <class T> T to() const;
  double toDouble() const;
  float toFloat() const;
  int64_t toLong() const;
};

struct IntArrayRef {
  IntArrayRef();
  IntArrayRef(std::initializer_list<int64_t> values);
  IntArrayRef(const std::vector<int64_t>& values);
  IntArrayRef(const int64_t& value);
  size_t size() const;
  const int64_t* begin() const;
  const int64_t* end() const;
  int64_t operator[](size_t i) const;
  std::vector<int64_t> vec() const;
};

struct TensorOptions {
  OOMLINT_MISSING_MEMBER(TensorOptions)
  TensorOptions();
  TensorOptions(Device device);
  TensorOptions(DeviceType device);
  TensorOptions(ScalarType dtype);
  TensorOptions dtype(ScalarType dtype) const;
  TensorOptions device(Device device) const;
  TensorOptions requires_grad(bool requires_grad = true) const;
  TensorOptions layout(Layout layout) const;
};

template <class Key, class Value> class Dict {
 public:
  Dict();
  void insert(const Key& key, const Value& value);
  const Value& at(const Key& key) const;
  bool contains(const Key& key) const;
  size_t size() const;
};

struct InferenceMode {
  InferenceMode(bool enabled = true);
  ~InferenceMode();
};
std::ostream& operator<<(std::ostream& out, IntArrayRef sizes);
}  // namespace c10

namespace at {
using c10::Device;
using c10::DeviceType;
using c10::IntArrayRef;
using c10::kCPU;
using c10::kCUDA;
using c10::Scalar;
using c10::ScalarType;
using c10::TensorOptions;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kFloat32 = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat16 = ScalarType::Half;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kInt64 = ScalarType::Long;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kInt32 = ScalarType::Int;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kByte = ScalarType::Byte;
struct Generator {};

class Tensor;
using TensorList = std::vector<Tensor>;
namespace indexing {
struct TensorIndex;
}  // namespace indexing

class Tensor {
 public:
  template <class... A> Tensor oomlint_missing_member(A&&...) const;
  Tensor oomlint_missing_member(std::initializer_list<int64_t> values) const;
  Tensor();
  Tensor(const Tensor& other);
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(const Tensor& other) &;
  Tensor& operator=(Tensor&& other) &;
  Tensor& operator=(const Tensor& other) &&;
  Tensor& operator=(const Scalar& value) &&;
  ~Tensor();

  // Conversion to host values: each is a device synchronisation.
  Scalar item() const;
  template <class T> T item() const;
  template <class T> T* data_ptr() const;
  void* data_ptr() const;
  std::vector<int64_t> vec() const;

  // Autograd.
  void backward(const Tensor& gradient = {}, c10::optional<bool> retain_graph = c10::nullopt,
                bool create_graph = false, c10::optional<TensorList> inputs = c10::nullopt) const;
  // LibTorch before 1.5: `y.backward(c10::nullopt, /*keep_graph=*/true, /*create_graph=*/true)`.
  void backward(c10::nullopt_t gradient, bool keep_graph, bool create_graph = false) const;
  Tensor detach() const;
  Tensor& detach_();
  Tensor& grad();
  const Tensor& grad() const;
  Tensor& mutable_grad() const;
  Tensor data() const;
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires_grad = true);
  Tensor& set_requires_grad(bool requires_grad);
  void retain_grad() const;
  bool is_leaf() const;
  unsigned register_hook(std::function<Tensor(Tensor)> hook) const;
  unsigned register_hook(std::function<void(Tensor)> hook) const;
  void remove_hook(unsigned pos) const;

  // Placement.
  Tensor cpu() const;
  Tensor cuda() const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const;
  Tensor to(DeviceType device, bool non_blocking = false, bool copy = false) const;
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(TensorOptions options, bool non_blocking = false, bool copy = false) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const;
  Tensor toType(ScalarType t) const;
  Tensor pin_memory() const;
  Device device() const;
  ScalarType scalar_type() const;
  TensorOptions options() const;
  bool is_cuda() const;
  bool defined() const;

  // Shape.
  IntArrayRef sizes() const;
  int64_t size(int64_t dim) const;
  int64_t dim() const;
  int64_t numel() const;
  Tensor view(IntArrayRef size) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(IntArrayRef dims) const;
  Tensor contiguous() const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor expand(IntArrayRef size) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  // `x.index({Slice(), Slice(0, -1)})`, `x.index_put_({mask}, 0)`: Python's indexing.
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& rhs);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& v);
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, c10::optional<int64_t> start = c10::nullopt, c10::optional<int64_t> end = c10::nullopt,
               int64_t step = 1) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  Tensor clone() const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false);

  // Math.
  Tensor sum() const;
  Tensor sum(IntArrayRef dim, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(IntArrayRef dim, bool keepdim = false) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  Tensor argmax(c10::optional<int64_t> dim = c10::nullopt, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  Tensor norm() const;
  Tensor abs() const;
  Tensor pow(const Scalar& exponent) const;
  Tensor sqrt() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor softmax(int64_t dim, c10::optional<ScalarType> dtype = c10::nullopt) const;
  Tensor log_softmax(int64_t dim, c10::optional<ScalarType> dtype = c10::nullopt) const;
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor eq(const Tensor& other) const;
  Tensor eq(const Scalar& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor clamp(c10::optional<Scalar> min = c10::nullopt, c10::optional<Scalar> max = c10::nullopt) const;
  Tensor& zero_();
  Tensor& fill_(const Scalar& value);
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& mul_(const Scalar& other);
  Tensor& div_(const Scalar& other);
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1);
  Tensor all() const;
  Tensor any() const;
  // Arithmetic and elementwise math as methods (`a.add(b)`, `ema.lerp_(x, w)`).
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(const Scalar& other) const;
  Tensor neg() const;
  Tensor square() const;
  Tensor rsqrt() const;
  Tensor log1p() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor sign() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor pow(const Tensor& exponent) const;
  Tensor prod() const;
  Tensor cumsum(int64_t dim) const;
  Tensor logsumexp(IntArrayRef dim, bool keepdim = false) const;
  Tensor std() const;
  Tensor var() const;
  Tensor argmin(c10::optional<int64_t> dim = c10::nullopt, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor nonzero() const;
  Tensor clamp_min(const Scalar& min) const;
  Tensor clamp_max(const Scalar& max) const;
  Tensor lt(const Scalar& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor gt(const Scalar& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor le(const Scalar& other) const;
  Tensor ge(const Scalar& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor type_as(const Tensor& other) const;
  Tensor view_as(const Tensor& other) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor reshape_as(const Tensor& other) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor& mul_(const Tensor& other);
  Tensor& add_(const Scalar& other, const Scalar& alpha = 1);
  Tensor& lerp_(const Tensor& end, const Scalar& weight);
  Tensor& addcmul_(const Tensor& a, const Tensor& b, const Scalar& value = 1);
  Tensor& clamp_(c10::optional<Scalar> min = c10::nullopt, c10::optional<Scalar> max = c10::nullopt);
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value);
  Tensor& uniform_(double from = 0, double to = 1);
  Tensor& normal_(double mean = 0, double std = 1);
  Tensor& set_(const Tensor& source);

  Tensor operator-() const;
  Tensor& operator+=(const Tensor& other);
  Tensor& operator+=(const Scalar& other);
  Tensor& operator-=(const Tensor& other);
  Tensor& operator*=(const Tensor& other);
  Tensor& operator*=(const Scalar& other);
  Tensor& operator/=(const Tensor& other);
  Tensor& operator/=(const Scalar& other);
  Tensor operator[](int64_t index) const;
  Tensor operator[](const Tensor& index) const;
};

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Scalar& b);
std::ostream& operator<<(std::ostream& out, const Tensor& t);
std::ostream& operator<<(std::ostream& out, const Scalar& s);

namespace indexing {
constexpr c10::nullopt_t None = c10::nullopt;
struct EllipsisIndexType {
  constexpr EllipsisIndexType() = default;
};
constexpr EllipsisIndexType Ellipsis;
struct Slice {
  Slice(c10::optional<int64_t> start = c10::nullopt, c10::optional<int64_t> stop = c10::nullopt,
        c10::optional<int64_t> step = c10::nullopt);
};
struct TensorIndex {
  TensorIndex(c10::nullopt_t);
  TensorIndex(int64_t integer);
  TensorIndex(int integer);
  TensorIndex(bool boolean);
  TensorIndex(Slice slice);
  TensorIndex(EllipsisIndexType);
  TensorIndex(const char* ellipsis);
  TensorIndex(Tensor tensor);
};
}  // namespace indexing

// Tensor functions (reached as torch::name through `using namespace at` in torch).
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor einsum(const std::string& equation, TensorList tensors);
Tensor softmax(const Tensor& input, int64_t dim, c10::optional<ScalarType> dtype = c10::nullopt);
Tensor log_softmax(const Tensor& input, int64_t dim, c10::optional<ScalarType> dtype = c10::nullopt);
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const c10::optional<Tensor>& attn_mask = c10::nullopt, double dropout_p = 0.0,
                                    bool is_causal = false);
Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);
Tensor relu(const Tensor& input);
Tensor sigmoid(const Tensor& input);
Tensor tanh(const Tensor& input);
Tensor dropout(const Tensor& input, double p, bool train);
Tensor flatten(const Tensor& input, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0);
Tensor argmax(const Tensor& input, c10::optional<int64_t> dim = c10::nullopt, bool keepdim = false);
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor nll_loss(const Tensor& input, const Tensor& target, const c10::optional<Tensor>& weight = {},
                int64_t reduction = 1, int64_t ignore_index = -100);
Tensor cross_entropy_loss(const Tensor& input, const Tensor& target, const c10::optional<Tensor>& weight = {},
                          int64_t reduction = 1, int64_t ignore_index = -100, double label_smoothing = 0.0);
Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1);
Tensor l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1);
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const c10::optional<Tensor>& weight = {},
                            int64_t reduction = 1);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const c10::optional<Tensor>& weight = {},
                                        const c10::optional<Tensor>& pos_weight = {}, int64_t reduction = 1);

// Reductions, elementwise math and losses as functions (`torch::sum(x)`, `torch::exp(logvar)`):
// without them an `auto` declaration initialised from one is invalid and its value is lost.
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Scalar& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Scalar& b);
Tensor neg(const Tensor& input);
Tensor abs(const Tensor& input);
Tensor pow(const Tensor& input, const Scalar& exponent);
Tensor pow(const Tensor& input, const Tensor& exponent);
Tensor pow(const Scalar& input, const Tensor& exponent);
Tensor sqrt(const Tensor& input);
Tensor rsqrt(const Tensor& input);
Tensor square(const Tensor& input);
Tensor exp(const Tensor& input);
Tensor log(const Tensor& input);
Tensor log1p(const Tensor& input);
Tensor lgamma(const Tensor& input);
Tensor sin(const Tensor& input);
Tensor cos(const Tensor& input);
Tensor sign(const Tensor& input);
Tensor floor(const Tensor& input);
Tensor round(const Tensor& input);
Tensor log_sigmoid(const Tensor& input);
Tensor softplus(const Tensor& input, const Scalar& beta = 1, const Scalar& threshold = 20);
Tensor sum(const Tensor& input, c10::optional<ScalarType> dtype = c10::nullopt);
Tensor sum(const Tensor& input, IntArrayRef dim, bool keepdim = false, c10::optional<ScalarType> dtype = c10::nullopt);
Tensor mean(const Tensor& input, c10::optional<ScalarType> dtype = c10::nullopt);
Tensor mean(const Tensor& input, IntArrayRef dim, bool keepdim = false, c10::optional<ScalarType> dtype = c10::nullopt);
Tensor prod(const Tensor& input);
Tensor cumsum(const Tensor& input, int64_t dim);
Tensor logsumexp(const Tensor& input, IntArrayRef dim, bool keepdim = false);
Tensor std(const Tensor& input);
Tensor var(const Tensor& input);
Tensor norm(const Tensor& input);
Tensor norm(const Tensor& input, const Scalar& p);
Tensor max(const Tensor& input);
Tensor max(const Tensor& input, const Tensor& other);
std::tuple<Tensor, Tensor> max(const Tensor& input, int64_t dim, bool keepdim = false);
Tensor min(const Tensor& input);
Tensor min(const Tensor& input, const Tensor& other);
std::tuple<Tensor, Tensor> min(const Tensor& input, int64_t dim, bool keepdim = false);
Tensor maximum(const Tensor& input, const Tensor& other);
Tensor minimum(const Tensor& input, const Tensor& other);
Tensor clamp(const Tensor& input, c10::optional<Scalar> min = c10::nullopt, c10::optional<Scalar> max = c10::nullopt);
Tensor clamp_min(const Tensor& input, const Scalar& min);
Tensor clamp_max(const Tensor& input, const Scalar& max);
Tensor argmin(const Tensor& input, c10::optional<int64_t> dim = c10::nullopt, bool keepdim = false);
std::tuple<Tensor, Tensor> topk(const Tensor& input, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
std::tuple<Tensor, Tensor> sort(const Tensor& input, int64_t dim = -1, bool descending = false);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Scalar& b);
Tensor gt(const Tensor& a, const Scalar& b);
Tensor masked_fill(const Tensor& input, const Tensor& mask, const Scalar& value);
Tensor gather(const Tensor& input, int64_t dim, const Tensor& index);
Tensor index_select(const Tensor& input, int64_t dim, const Tensor& index);
Tensor transpose(const Tensor& input, int64_t dim0, int64_t dim1);
Tensor reshape(const Tensor& input, IntArrayRef shape);
Tensor unsqueeze(const Tensor& input, int64_t dim);
Tensor squeeze(const Tensor& input);
Tensor squeeze(const Tensor& input, int64_t dim);
Tensor narrow(const Tensor& input, int64_t dim, int64_t start, int64_t length);
std::vector<Tensor> chunk(const Tensor& input, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& input, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& input, int64_t dim = 0);
Tensor tril(const Tensor& input, int64_t diagonal = 0);
Tensor triu(const Tensor& input, int64_t diagonal = 0);
Tensor diag(const Tensor& input, int64_t diagonal = 0);
Tensor outer(const Tensor& a, const Tensor& b);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor cosine_similarity(const Tensor& a, const Tensor& b, int64_t dim = 1, double eps = 1e-8);
Tensor pairwise_distance(const Tensor& a, const Tensor& b, double p = 2, double eps = 1e-6, bool keepdim = false);
Tensor cdist(const Tensor& a, const Tensor& b, double p = 2);
Tensor linear(const Tensor& input, const Tensor& weight, const c10::optional<Tensor>& bias = {});
Tensor embedding(const Tensor& weight, const Tensor& indices);
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const c10::optional<Tensor>& weight = {},
                  const c10::optional<Tensor>& bias = {}, double eps = 1e-5);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1, double beta = 1.0);
Tensor huber_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1, double delta = 1.0);
Tensor kl_div(const Tensor& input, const Tensor& target, int64_t reduction = 1, bool log_target = false);
Tensor margin_ranking_loss(const Tensor& a, const Tensor& b, const Tensor& target, double margin = 0.0,
                           int64_t reduction = 1);
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, int64_t reduction = 1);
Tensor full_like(const Tensor& self, const Scalar& fill_value);
Tensor rand_like(const Tensor& self);
Tensor bernoulli(const Tensor& p);
Tensor multinomial(const Tensor& p, int64_t samples, bool replacement = false);
Tensor normal(const Tensor& mean, double std = 1);

class Context {
 public:
  void setBenchmarkCuDNN(bool benchmark);
  bool benchmarkCuDNN() const;
  void setDeterministicCuDNN(bool deterministic);
};
Context& globalContext();

namespace Reduction {
enum Reduction { None, Mean, Sum, END };
}  // namespace Reduction

struct AutoGradMode {
  AutoGradMode(bool enabled);
  ~AutoGradMode();
};
struct NoGradGuard : public AutoGradMode {
  NoGradGuard();
};
struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};
namespace autocast {
bool is_enabled();
void set_enabled(bool enabled);
void clear_cache();
}  // namespace autocast
}  // namespace at

namespace c10::cuda::CUDACachingAllocator {
void emptyCache();
}  // namespace c10::cuda::CUDACachingAllocator

namespace torch {
using namespace at;
using at::Tensor;
using c10::Device;
using c10::InferenceMode;
using c10::optional;
template <class T> using ArrayRef = std::vector<T>;
using at::AutoGradMode;
using at::NoGradGuard;

// Factories: `options` is where the device goes (torch::kCUDA converts to TensorOptions).
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor ones(IntArrayRef size, TensorOptions options = {});
Tensor empty(IntArrayRef size, TensorOptions options = {});
Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions options = {});
Tensor eye(int64_t n, TensorOptions options = {});
Tensor arange(const Scalar& end, TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end, TensorOptions options = {});
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions options = {});
Tensor randn(IntArrayRef size, TensorOptions options = {});
Tensor rand(IntArrayRef size, TensorOptions options = {});
Tensor randint(int64_t high, IntArrayRef size, TensorOptions options = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions options = {});
Tensor randperm(int64_t n, TensorOptions options = {});
Tensor zeros_like(const Tensor& self, TensorOptions options = {});
Tensor ones_like(const Tensor& self, TensorOptions options = {});
Tensor randn_like(const Tensor& self, TensorOptions options = {});
Tensor empty_like(const Tensor& self, TensorOptions options = {});
Tensor tensor(std::initializer_list<double> values, TensorOptions options = {});
Tensor tensor(const std::vector<float>& values, TensorOptions options = {});
Tensor tensor(const std::vector<int64_t>& values, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options = {});
TensorOptions dtype(ScalarType dtype);
TensorOptions device(Device device);
TensorOptions requires_grad(bool requires_grad = true);
void manual_seed(uint64_t seed);
void set_num_threads(int n);

namespace cuda {
bool is_available();
size_t device_count();
void synchronize(int64_t device_index = -1);
void manual_seed(uint64_t seed);
void manual_seed_all(uint64_t seed);
}  // namespace cuda

namespace autograd {
using variable_list = std::vector<Tensor>;
variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs = {},
                   c10::optional<bool> retain_graph = c10::nullopt, bool create_graph = false, bool allow_unused = false);
void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
              c10::optional<bool> retain_graph = c10::nullopt, bool create_graph = false,
              const variable_list& inputs = {});
}  // namespace autograd

template <class Key, class Value> class OrderedDict {
 public:
  class Item {
   public:
    const Key& key() const;
    Value& value();
    const Value& value() const;
    Value* operator->();
  };
  Item* begin();
  Item* end();
  const Item* begin() const;
  const Item* end() const;
  size_t size() const;
  Value& operator[](const Key& key);
  std::vector<Value> values() const;
  std::vector<Key> keys() const;
};

/// `torch::ExpandingArray<2>({3, 3})`: D sizes, from a list or one value repeated.
template <size_t D, class T = int64_t> class ExpandingArray {
 public:
  ExpandingArray(std::initializer_list<T> list);
  ExpandingArray(std::vector<T> list);
  ExpandingArray(T single);
  T* data();
  size_t size() const;
  operator c10::IntArrayRef() const;
};

namespace nn {
class Module;
template <class Contained> class ModuleHolder {
 public:
  ModuleHolder();
  ModuleHolder(std::nullptr_t);
  ModuleHolder(std::shared_ptr<Contained> module);
  template <class Head, class... Tail,
            class = std::enable_if_t<!std::is_same_v<std::decay_t<Head>, std::nullptr_t> &&
                                     !std::is_same_v<std::decay_t<Head>, std::shared_ptr<Contained>>>>
  explicit ModuleHolder(Head&& head, Tail&&... tail);
  Contained* operator->();
  const Contained* operator->() const;
  Contained& operator*();
  template <class... Args>
  auto operator()(Args&&... args) -> decltype(std::declval<Contained&>().forward(std::forward<Args>(args)...));
  const std::shared_ptr<Contained>& ptr() const;
  Contained* get();
  bool is_empty() const;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  Module();
  explicit Module(std::string name);
  virtual ~Module();
  template <class M> std::shared_ptr<M> register_module(std::string name, ModuleHolder<M> module_holder);
  template <class M> std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module);
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  Tensor& register_buffer(std::string name, Tensor tensor);
  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  virtual void train(bool on = true);
  void eval();
  virtual bool is_training() const;
  virtual void to(Device device, bool non_blocking = false);
  virtual void to(ScalarType dtype, bool non_blocking = false);
  virtual void zero_grad(bool set_to_none = true);
  void apply(const std::function<void(Module&)>& function);
};

template <class Derived> class Cloneable : public Module {
 public:
  using Module::Module;
  virtual void reset() {}
};

class AnyModule {
 public:
  template <class M> AnyModule(M module);
  template <class... Args> Tensor forward(Args&&... args);
};
}  // namespace nn
}  // namespace torch

// Declares the holder `Name` for a module class `NameImpl`, as LibTorch's macro of the same name does.
#define TORCH_MODULE(Name)                                    \
  class Name : public torch::nn::ModuleHolder<Name##Impl> {   \
   public:                                                    \
    using torch::nn::ModuleHolder<Name##Impl>::ModuleHolder;  \
  }

namespace torch::nn {
struct LinearOptions {
  OOMLINT_MISSING_MEMBER(LinearOptions)
  LinearOptions(int64_t in_features, int64_t out_features);
  LinearOptions& bias(bool with_bias);
};
struct LinearImpl : Cloneable<LinearImpl> {
  LinearImpl(int64_t in_features, int64_t out_features);
  explicit LinearImpl(const LinearOptions& options);
  Tensor forward(const Tensor& input);
  Tensor weight, bias;
};
TORCH_MODULE(Linear);

struct Conv2dOptions {
  OOMLINT_MISSING_MEMBER(Conv2dOptions)
  Conv2dOptions(int64_t in_channels, int64_t out_channels, IntArrayRef kernel_size);
  Conv2dOptions& stride(IntArrayRef stride);
  Conv2dOptions& padding(IntArrayRef padding);
  Conv2dOptions& bias(bool with_bias);
};
struct Conv2dImpl : Cloneable<Conv2dImpl> {
  Conv2dImpl(int64_t in_channels, int64_t out_channels, IntArrayRef kernel_size);
  explicit Conv2dImpl(const Conv2dOptions& options);
  Tensor forward(const Tensor& input);
};
TORCH_MODULE(Conv2d);

struct EmbeddingOptions {
  OOMLINT_MISSING_MEMBER(EmbeddingOptions)
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim);
};
struct EmbeddingImpl : Cloneable<EmbeddingImpl> {
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim);
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  Tensor forward(const Tensor& indices);
  Tensor weight;
};
TORCH_MODULE(Embedding);

struct DropoutOptions {
  OOMLINT_MISSING_MEMBER(DropoutOptions)
  DropoutOptions(double p = 0.5);
};
struct DropoutImpl : Cloneable<DropoutImpl> {
  explicit DropoutImpl(const DropoutOptions& options = {});
  explicit DropoutImpl(double p);
  Tensor forward(Tensor input);
};
TORCH_MODULE(Dropout);

struct LayerNormOptions {
  OOMLINT_MISSING_MEMBER(LayerNormOptions)
  LayerNormOptions(std::vector<int64_t> normalized_shape);
  LayerNormOptions& eps(double eps);
};
struct LayerNormImpl : Cloneable<LayerNormImpl> {
  explicit LayerNormImpl(LayerNormOptions options);
  explicit LayerNormImpl(std::vector<int64_t> normalized_shape);
  Tensor forward(const Tensor& input);
};
TORCH_MODULE(LayerNorm);

struct BatchNorm1dImpl : Cloneable<BatchNorm1dImpl> {
  explicit BatchNorm1dImpl(int64_t num_features);
  Tensor forward(const Tensor& input);
};
TORCH_MODULE(BatchNorm1d);
struct BatchNorm2dImpl : Cloneable<BatchNorm2dImpl> {
  explicit BatchNorm2dImpl(int64_t num_features);
  Tensor forward(const Tensor& input);
};
TORCH_MODULE(BatchNorm2d);

struct ReLUImpl : Cloneable<ReLUImpl> {
  ReLUImpl();
  Tensor forward(Tensor input);
};
TORCH_MODULE(ReLU);
struct GELUImpl : Cloneable<GELUImpl> {
  GELUImpl();
  Tensor forward(const Tensor& input);
};
TORCH_MODULE(GELU);

struct LSTMOptions {
  OOMLINT_MISSING_MEMBER(LSTMOptions)
  LSTMOptions(int64_t input_size, int64_t hidden_size);
  LSTMOptions& num_layers(int64_t layers);
  LSTMOptions& batch_first(bool batch_first);
  LSTMOptions& dropout(double p);
};
struct LSTMImpl : Cloneable<LSTMImpl> {
  LSTMImpl(int64_t input_size, int64_t hidden_size);
  explicit LSTMImpl(const LSTMOptions& options);
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                          c10::optional<std::tuple<Tensor, Tensor>> hx = {});
};
TORCH_MODULE(LSTM);
struct GRUOptions {
  OOMLINT_MISSING_MEMBER(GRUOptions)
  GRUOptions(int64_t input_size, int64_t hidden_size);
  GRUOptions& num_layers(int64_t layers);
  GRUOptions& batch_first(bool batch_first);
};
struct GRUImpl : Cloneable<GRUImpl> {
  GRUImpl(int64_t input_size, int64_t hidden_size);
  explicit GRUImpl(const GRUOptions& options);
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
};
TORCH_MODULE(GRU);
struct RNNOptions {
  OOMLINT_MISSING_MEMBER(RNNOptions)
  RNNOptions(int64_t input_size, int64_t hidden_size);
  RNNOptions& num_layers(int64_t layers);
  RNNOptions& batch_first(bool batch_first);
};
struct RNNImpl : Cloneable<RNNImpl> {
  RNNImpl(int64_t input_size, int64_t hidden_size);
  explicit RNNImpl(const RNNOptions& options);
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
};
TORCH_MODULE(RNN);
struct RNNCellOptions {
  OOMLINT_MISSING_MEMBER(RNNCellOptions)
  RNNCellOptions(int64_t input_size, int64_t hidden_size);
};
struct RNNCellImpl : Cloneable<RNNCellImpl> {
  RNNCellImpl(int64_t input_size, int64_t hidden_size);
  explicit RNNCellImpl(const RNNCellOptions& options);
  Tensor forward(const Tensor& input, Tensor hx = {});
};
TORCH_MODULE(RNNCell);
struct GRUCellOptions {
  OOMLINT_MISSING_MEMBER(GRUCellOptions)
  GRUCellOptions(int64_t input_size, int64_t hidden_size);
};
struct GRUCellImpl : Cloneable<GRUCellImpl> {
  GRUCellImpl(int64_t input_size, int64_t hidden_size);
  explicit GRUCellImpl(const GRUCellOptions& options);
  Tensor forward(const Tensor& input, Tensor hx = {});
};
TORCH_MODULE(GRUCell);
struct LSTMCellOptions {
  OOMLINT_MISSING_MEMBER(LSTMCellOptions)
  LSTMCellOptions(int64_t input_size, int64_t hidden_size);
};
struct LSTMCellImpl : Cloneable<LSTMCellImpl> {
  LSTMCellImpl(int64_t input_size, int64_t hidden_size);
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  std::tuple<Tensor, Tensor> forward(const Tensor& input, c10::optional<std::tuple<Tensor, Tensor>> hx = {});
};
TORCH_MODULE(LSTMCell);

struct MultiheadAttentionOptions {
  OOMLINT_MISSING_MEMBER(MultiheadAttentionOptions)
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads);
};
struct MultiheadAttentionImpl : Cloneable<MultiheadAttentionImpl> {
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads);
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value);
};
TORCH_MODULE(MultiheadAttention);

struct SequentialImpl : Cloneable<SequentialImpl> {
  SequentialImpl();
  template <class... Modules> explicit SequentialImpl(Modules&&... modules);
  template <class M> void push_back(M module);
  Tensor forward(Tensor input);
};
TORCH_MODULE(Sequential);

struct FunctionalImpl : Cloneable<FunctionalImpl> {
  explicit FunctionalImpl(std::function<Tensor(Tensor)> function);
  Tensor forward(Tensor input);
};
TORCH_MODULE(Functional);

struct CrossEntropyLossImpl : Cloneable<CrossEntropyLossImpl> {
  CrossEntropyLossImpl();
  Tensor forward(const Tensor& input, const Tensor& target);
};
TORCH_MODULE(CrossEntropyLoss);
struct NLLLossImpl : Cloneable<NLLLossImpl> {
  NLLLossImpl();
  Tensor forward(const Tensor& input, const Tensor& target);
};
TORCH_MODULE(NLLLoss);
struct MSELossImpl : Cloneable<MSELossImpl> {
  MSELossImpl();
  Tensor forward(const Tensor& input, const Tensor& target);
};
TORCH_MODULE(MSELoss);
struct BCEWithLogitsLossImpl : Cloneable<BCEWithLogitsLossImpl> {
  BCEWithLogitsLossImpl();
  Tensor forward(const Tensor& input, const Tensor& target);
};
TORCH_MODULE(BCEWithLogitsLoss);

namespace utils {
namespace rnn {
Tensor pad_sequence(std::vector<Tensor> sequences, bool batch_first = false, double padding_value = 0);
class PackedSequence {
 public:
  const Tensor& data() const;
  const Tensor& batch_sizes() const;
};
PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first = false, bool enforce_sorted = true);
std::tuple<Tensor, Tensor> pad_packed_sequence(PackedSequence sequence, bool batch_first = false, double padding_value = 0.0,
                                               c10::optional<int64_t> total_length = c10::nullopt);
}  // namespace rnn
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0);
}  // namespace utils

namespace functional {
struct SoftmaxFuncOptions {
  OOMLINT_MISSING_MEMBER(SoftmaxFuncOptions)
  SoftmaxFuncOptions(int64_t dim);
};
struct LogSoftmaxFuncOptions {
  OOMLINT_MISSING_MEMBER(LogSoftmaxFuncOptions)
  LogSoftmaxFuncOptions(int64_t dim);
};
struct DropoutFuncOptions {
  OOMLINT_MISSING_MEMBER(DropoutFuncOptions)
  DropoutFuncOptions& p(double p);
  DropoutFuncOptions& training(bool training);
};
struct CrossEntropyFuncOptions {
  OOMLINT_MISSING_MEMBER(CrossEntropyFuncOptions)
  CrossEntropyFuncOptions& ignore_index(int64_t index);
};
struct NLLLossFuncOptions {
  OOMLINT_MISSING_MEMBER(NLLLossFuncOptions)
};
struct MSELossFuncOptions {
  OOMLINT_MISSING_MEMBER(MSELossFuncOptions)
};
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options);
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options);
Tensor relu(Tensor input);
Tensor gelu(const Tensor& input);
Tensor dropout(Tensor input, const DropoutFuncOptions& options = {});
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options = {});
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {});
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options = {});
}  // namespace functional
}  // namespace torch::nn

namespace torch::optim {
struct OptimizerParamGroup {
  std::vector<Tensor>& params();
};
class Optimizer {
 public:
  virtual ~Optimizer();
  virtual void zero_grad(bool set_to_none = true);
  virtual Tensor step(std::function<Tensor()> closure = nullptr);
  std::vector<OptimizerParamGroup>& param_groups();
};
struct SGDOptions {
  OOMLINT_MISSING_MEMBER(SGDOptions)
  SGDOptions(double lr);
  SGDOptions& momentum(double momentum);
  SGDOptions& weight_decay(double weight_decay);
};
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions defaults);
};
struct AdamOptions {
  OOMLINT_MISSING_MEMBER(AdamOptions)
  AdamOptions(double lr = 1e-3);
  AdamOptions& weight_decay(double weight_decay);
  AdamOptions& betas(std::tuple<double, double> betas);
};
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions defaults = {});
};
struct AdamWOptions {
  OOMLINT_MISSING_MEMBER(AdamWOptions)
  AdamWOptions(double lr = 1e-3);
  AdamWOptions& weight_decay(double weight_decay);
};
class AdamW : public Optimizer {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions defaults = {});
};
struct AdagradOptions {
  OOMLINT_MISSING_MEMBER(AdagradOptions)
  AdagradOptions(double lr = 1e-2);
  AdagradOptions& weight_decay(double weight_decay);
  AdagradOptions& initial_accumulator_value(double value);
};
class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {});
};
struct RMSpropOptions {
  OOMLINT_MISSING_MEMBER(RMSpropOptions)
  RMSpropOptions(double lr = 1e-2);
  RMSpropOptions& momentum(double momentum);
  RMSpropOptions& weight_decay(double weight_decay);
};
class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {});
};
class StepLR {
 public:
  StepLR(Optimizer& optimizer, unsigned step_size, double gamma = 0.1);
  void step();
};
}  // namespace torch::optim

namespace torch::data {
template <class Data = Tensor, class Target = Tensor> struct Example {
  Example();
  Example(Data data, Target target);
  Data data;
  Target target;
};

template <class Batch> class DataLoader {
 public:
  class iterator {
   public:
    Batch& operator*();
    Batch* operator->();
    iterator& operator++();
    bool operator!=(const iterator& other) const;
    bool operator==(const iterator& other) const;
  };
  iterator begin();
  iterator end();
};

template <class Self, class Batch> class BatchDataset;
template <class Source, class Transform> class MapDataset;

namespace transforms {
template <class T = Example<>> struct Stack {
  static Example<> apply_batch(std::vector<Example<>> examples);
};
template <class Target = Tensor> struct Normalize {
  Normalize(double mean, double stddev);
  Normalize(std::vector<double> mean, std::vector<double> stddev);
  template <class B> static B apply_batch(B batch);
};
}  // namespace transforms

template <class Source, class Transform> class MapDataset {
 public:
  using BatchType = decltype(Transform::apply_batch(std::declval<typename Source::BatchType>()));
  template <class T> MapDataset<MapDataset, T> map(T transform) &&;
  c10::optional<size_t> size() const;
};

namespace datasets {
template <class Self, class SingleExample = Example<>> class Dataset {
 public:
  using BatchType = std::vector<SingleExample>;
  virtual ~Dataset();
  virtual SingleExample get(size_t index) = 0;
  virtual c10::optional<size_t> size() const = 0;
  template <class T> MapDataset<Self, T> map(T transform) &&;
};
class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);
  Example<> get(size_t index) override;
  c10::optional<size_t> size() const override;
};
}  // namespace datasets

struct DataLoaderOptions {
  OOMLINT_MISSING_MEMBER(DataLoaderOptions)
  DataLoaderOptions(size_t batch_size = 1);
  DataLoaderOptions& batch_size(size_t batch_size);
  DataLoaderOptions& workers(size_t workers);
  DataLoaderOptions& drop_last(bool drop_last);
};
namespace samplers {
struct RandomSampler {};
struct SequentialSampler {};
}  // namespace samplers

template <class Dataset, class Sampler> class StatelessDataLoader : public DataLoader<typename Dataset::BatchType> {};

template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<DataLoader<typename Dataset::BatchType>> make_data_loader(Dataset dataset, DataLoaderOptions options);
template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<DataLoader<typename Dataset::BatchType>> make_data_loader(Dataset dataset, size_t batch_size);
}  // namespace torch::data

namespace torch::jit {
/// A TorchScript value: what a scripted module's forward takes and returns.
class IValue {
 public:
  IValue();
  IValue(Tensor t);
  IValue(double v);
  IValue(int64_t v);
  IValue(bool v);
  Tensor toTensor() const;
  bool isTensor() const;
  std::vector<IValue> toTupleRef() const;
  double toDouble() const;
  int64_t toInt() const;
};
/// A TorchScript module (`torch::jit::load`): a module for the rules, whose forward takes IValues.
class Module : public torch::nn::Module {
 public:
  IValue forward(std::vector<IValue> inputs);
  IValue operator()(std::vector<IValue> inputs);
  void to(Device device, bool non_blocking = false);
  void to(c10::ScalarType dtype, bool non_blocking = false);
  void save(const std::string& filename) const;
};
Module load(const std::string& filename, c10::optional<Device> device = c10::nullopt);
namespace script {
using Module = torch::jit::Module;
}  // namespace script
}  // namespace torch::jit

namespace torch {
template <class Value> void save(const Value& value, const std::string& filename);
template <class Value> void load(Value& value, const std::string& filename, c10::optional<Device> device = c10::nullopt);
}  // namespace torch
