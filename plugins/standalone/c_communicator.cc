// The communicators of the C API (ral_communicator_create, ral_communicator_create_gloo): a
// ral::Communicator over a caller's table of C functions, or a Gloo one.
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "plugins/standalone/c_handles.h"
#include "ral/c_api.h"
#include "ral/dlpack_util.h"
#include "ral/gloo_communicator.h"

namespace {

using ral::DType;
using ral::Status;

// Calls the caller's functions; a non-zero return is an error with the message it wrote.
class CCommunicator final : public ral::Communicator {
 public:
  CCommunicator(const ral_communicator_ops& ops, void* self) : ops_(ops), self_(self) {}
  ~CCommunicator() override {
    if (ops_.release != nullptr) ops_.release(self_);
  }
  int rank() const override { return ops_.rank(self_); }
  int size() const override { return ops_.size(self_); }
  std::string describe() const override {
    return ral::internal::strCat("the caller's communicator, rank ", rank(), " of ", size());
  }
  Status allReduce(const void* in, void* out, int64_t count, DType dtype,
                   ral::ReduceOp op) override {
    return call("all_reduce", ops_.all_reduce, in, out, count,
                ral::standalone::dtypeToDLPack(dtype), static_cast<int>(op));
  }
  Status allGather(const void* in, void* out, int64_t count, DType dtype) override {
    return call("all_gather", ops_.all_gather, in, out, count,
                ral::standalone::dtypeToDLPack(dtype));
  }
  Status reduceScatter(const void* in, void* out, int64_t count, DType dtype,
                       ral::ReduceOp op) override {
    return call("reduce_scatter", ops_.reduce_scatter, in, out, count,
                ral::standalone::dtypeToDLPack(dtype), static_cast<int>(op));
  }
  Status broadcast(void* data, int64_t count, DType dtype, int root) override {
    return call("broadcast", ops_.broadcast, data, count, ral::standalone::dtypeToDLPack(dtype),
                root);
  }
  Status allToAll(const void* in, void* out, int64_t count, DType dtype) override {
    return call("all_to_all", ops_.all_to_all, in, out, count,
                ral::standalone::dtypeToDLPack(dtype));
  }
  Status send(const void* data, int64_t count, DType dtype, int peer, int tag) override {
    return call("send", ops_.send, data, count, ral::standalone::dtypeToDLPack(dtype), peer, tag);
  }
  Status recv(void* data, int64_t count, DType dtype, int peer, int tag) override {
    return call("recv", ops_.recv, data, count, ral::standalone::dtypeToDLPack(dtype), peer, tag);
  }

 private:
  template <typename Fn, typename... Args>
  Status call(const char* what, Fn* fn, Args... args) const {
    if (fn == nullptr)
      return ral::unsupported(what,
                              " is not provided by the caller's communicator (NULL in its "
                              "ral_communicator_ops)");
    char error[512] = {};
    if (fn(self_, args..., error, sizeof(error)) == 0) return Status();
    error[sizeof(error) - 1] = '\0';
    return ral::unavailable(what, " failed in the caller's communicator (rank ", rank(), " of ",
                            size(), "): ", error[0] != '\0' ? error : "no message");
  }

  ral_communicator_ops ops_;
  void* self_;
};

int handOut(std::shared_ptr<ral::Communicator> c, ral_communicator** out) {
  auto* handle = new (std::nothrow) ral_communicator{std::move(c)};
  if (handle == nullptr) return ral::c_api::report(ral::outOfMemory("a communicator handle"));
  *out = handle;
  return RAL_OK;
}

}  // namespace

extern "C" {

int ral_communicator_create(const ral_communicator_ops* ops, void* self, ral_communicator** out) {
  if (out == nullptr) return ral::c_api::nullArgument("out");
  *out = nullptr;
  if (ops == nullptr) return ral::c_api::nullArgument("ops");
  if (ops->struct_size < sizeof(ral_communicator_ops))
    return ral::c_api::report(ral::invalidArgument("ral_communicator_ops.struct_size is ",
                                                   ops->struct_size, "; set it to ",
                                                   "sizeof(ral_communicator_ops)"));
  if (ops->rank == nullptr || ops->size == nullptr)
    return ral::c_api::report(
        ral::invalidArgument("ral_communicator_ops needs rank and size functions"));
  const int rank = ops->rank(self), size = ops->size(self);
  if (size < 1 || rank < 0 || rank >= size)
    return ral::c_api::report(
        ral::invalidArgument("the communicator says rank ", rank, " of ", size));
  return handOut(std::make_shared<CCommunicator>(*ops, self), out);
}

int ral_communicator_create_gloo(int rank, int size, const char* store_host, int store_port,
                                 uint64_t timeout_ms, ral_communicator** out) {
  if (out == nullptr) return ral::c_api::nullArgument("out");
  *out = nullptr;
  if (store_host == nullptr) return ral::c_api::nullArgument("store_host");
  ral::GlooOptions o;
  o.rank = rank;
  o.size = size;
  o.store_host = store_host;
  o.store_port = store_port;
  o.store_server = rank == 0;
  if (timeout_ms == 0 || timeout_ms > uint64_t{7} * 24 * 3600 * 1000)
    return ral::c_api::report(
        ral::invalidArgument("timeout_ms ", timeout_ms, " is not in (0, one week]"));
  o.timeout = std::chrono::milliseconds(timeout_ms);
  auto c = ral::createGlooCommunicator(o);
  if (!c.ok()) return ral::c_api::report(c.status());
  return handOut(std::move(*c), out);
}

void ral_communicator_free(ral_communicator* communicator) { delete communicator; }

}  // extern "C"
