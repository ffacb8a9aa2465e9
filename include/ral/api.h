// RAL_API: registers a C++ function as a RAL function (docs/abi.md, "Registration").
//
//   template <typename T>
//   void gemm(ExecutionContext*, MemRef<T, 2> a, MemRef<T, 2> b, MemRef<T, 2> c, bool, bool);
//   RAL_API("ral_gemm", "cpu", gemm<float>);
//
// registers `ral_gemm___cpu___pvoid_m2df32_m2df32_m2df32_i1_i1___void`. The macro derives the
// encoding from the signature at compile time and generates the type-erased wrapper
// `void(void* ctx, void** args)`: args[0] points to the context pointer, args[1..n] to the
// arguments, then one slot per result (a std::tuple return gives several results). The first
// parameter must be `ExecutionContext*`, a pointer to a class derived from it (a host-specific
// override), or `void*`.
#ifndef RAL_API_H_
#define RAL_API_H_

#include <cstddef>
#include <exception>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ral/abi.h"
#include "ral/context_type.h"
#include "ral/execution_context.h"
#include "ral/name_encoding.h"
#include "ral/registry.h"

namespace ral {
namespace internal {

template <typename Ctx>
const ContextType* contextTypeOf() {
  using C = std::remove_cv_t<std::remove_pointer_t<Ctx>>;
  if constexpr (std::is_void_v<C>) {
    return &ExecutionContext::kType;
  } else {
    static_assert(std::is_base_of_v<ExecutionContext, C>,
                  "the first parameter of a RAL function must point to an ExecutionContext");
    return &C::kType;
  }
}

template <typename Ctx>
Ctx castContext(void* ctx) {
  using C = std::remove_pointer_t<Ctx>;
  if constexpr (std::is_void_v<std::remove_cv_t<C>>) {
    return ctx;
  } else {
    return static_cast<Ctx>(ExecutionContext::fromAbi(ctx));
  }
}

template <typename T>
struct IsTuple : std::false_type {};
template <typename... T>
struct IsTuple<std::tuple<T...>> : std::true_type {};

template <typename F>
struct Signature;
template <typename R, typename Ctx, typename... A>
struct Signature<R (*)(Ctx, A...)> {
  using Result = R;
  using Context = Ctx;
  using Args = std::tuple<A...>;
  static constexpr size_t kNumArgs = sizeof...(A);
};
template <typename R, typename Ctx, typename... A>
struct Signature<R (*)(Ctx, A...) noexcept> : Signature<R (*)(Ctx, A...)> {};

template <typename T>
using Slot = std::remove_cv_t<std::remove_reference_t<T>>;

template <typename Tuple, size_t... J>
void storeResults(Tuple&& results, void** slots, std::index_sequence<J...>) {
  ((*static_cast<Slot<std::tuple_element_t<J, std::decay_t<Tuple>>>*>(slots[J]) =
        std::get<J>(std::forward<Tuple>(results))),
   ...);
}

template <auto Fn, size_t... I>
void invoke(void* ctx, void** args, std::index_sequence<I...>) {
  using Sig = Signature<decltype(Fn)>;
  using R = typename Sig::Result;
  using Args = typename Sig::Args;
  auto c = castContext<typename Sig::Context>(ctx);
  constexpr size_t kFirstResult = 1 + Sig::kNumArgs;
  if constexpr (std::is_void_v<R>) {
    Fn(c, *static_cast<Slot<std::tuple_element_t<I, Args>>*>(args[I + 1])...);
  } else if constexpr (IsTuple<R>::value) {
    storeResults(Fn(c, *static_cast<Slot<std::tuple_element_t<I, Args>>*>(args[I + 1])...),
                 args + kFirstResult, std::make_index_sequence<std::tuple_size_v<R>>());
  } else {
    *static_cast<Slot<R>*>(args[kFirstResult]) =
        Fn(c, *static_cast<Slot<std::tuple_element_t<I, Args>>*>(args[I + 1])...);
  }
}

void signalException(void* ctx, const char* what);

// The generated type-erased entry. Exceptions never cross the C ABI: they become an INTERNAL
// error on the execution context.
template <auto Fn>
void apiWrapper(void* ctx, void** args) noexcept {
  try {
    invoke<Fn>(ctx, args, std::make_index_sequence<Signature<decltype(Fn)>::kNumArgs>());
  } catch (const std::exception& e) {
    signalException(ctx, e.what());
  } catch (...) {
    signalException(ctx, "unknown exception");
  }
}

struct ApiRegistrar {
  ApiRegistrar(std::string_view target, std::string_view device, std::string_view signature,
               ral_fn fn, const ContextType* type, const char* file, int line);
  Status status;
};

}  // namespace internal

// The full encoded name a RAL_API registration of `Fn` under (target, device) produces.
template <auto Fn>
std::string apiName(std::string_view target, std::string_view device) {
  return encodeApiName(target, device, kSignatureOf<decltype(Fn)>.view());
}

}  // namespace ral

#define RAL_API_CONCAT_INNER_(a, b) a##b
#define RAL_API_CONCAT_(a, b) RAL_API_CONCAT_INNER_(a, b)

// RAL_API(target, device, function): `function` is a function name (template arguments allowed).
#define RAL_API(target, device, ...)                                                           \
  static const ::ral::internal::ApiRegistrar RAL_API_CONCAT_(ral_api_registrar_, __COUNTER__)( \
      target, device, ::ral::kSignatureOf<decltype(&__VA_ARGS__)>.view(),                      \
      &::ral::internal::apiWrapper<&__VA_ARGS__>,                                              \
      ::ral::internal::contextTypeOf<                                                          \
          typename ::ral::internal::Signature<decltype(&__VA_ARGS__)>::Context>(),             \
      __FILE__, __LINE__)

// The name used by the RAL introduction.
#define TAO_RAL_API(target, device, ...) RAL_API(target, device, __VA_ARGS__)

#endif  // RAL_API_H_
