// Cosine's C interface to FASTER's C++ key-value store (FasterKv, from the sources libfaster-sys 0.11 ships),
// for the `faster` peer of cosine-peers.
//
// Why not libfaster-sys's own C interface (faster-c.cc): its contexts hold their variable-length key first and
// copy the key's bytes right after it when FASTER deep-copies a context for a pending operation, so the bytes
// land on the context's own fields (and past its allocation for keys over 16 bytes). Every read that goes to
// disk then compares a clobbered key and answers "not found". Here the key is the last field of every context,
// and a deep copy allocates room for the key's bytes (and an upsert's value) after it.
//
// Keys and values are byte strings. A read hands the value to a callback; a read-modify-write is done by the
// caller (a lock, a read and an upsert), so FASTER's own RMW is not used. Upserts to a record in the mutable
// region overwrite it in place, as FASTER's hybrid log does.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <unordered_map>
#include <string>
#include <thread>
#include <vector>

#include "core/faster.h"
#include "device/file_system_disk.h"

using namespace FASTER::core;

namespace {

/// A key: its length, then either a pointer to the caller's bytes (a context on the caller's stack) or, when
/// copied into a record or a deep-copied context, the bytes themselves right after this object.
class Key {
 public:
  Key(const uint8_t* bytes, uint64_t length) : length_{length}, external_{bytes} {}
  /// Copies the bytes after this object: the destination (a record, or a context allocated with room)
  /// reserves `size()` bytes.
  Key(const Key& other) : length_{other.length_}, external_{nullptr} {
    std::memcpy(inline_bytes(), other.data(), length_);
  }
  inline uint32_t size() const { return static_cast<uint32_t>(sizeof(Key) + length_); }
  inline KeyHash GetHash() const { return KeyHash{Utility::Hash8BitBytes(data(), length_)}; }
  inline bool operator==(const Key& other) const {
    return length_ == other.length_ && std::memcmp(data(), other.data(), length_) == 0;
  }
  inline bool operator!=(const Key& other) const { return !(*this == other); }
  inline const uint8_t* data() const { return external_ != nullptr ? external_ : inline_bytes(); }
  inline uint64_t length() const { return length_; }

 private:
  inline uint8_t* inline_bytes() { return reinterpret_cast<uint8_t*>(this + 1); }
  inline const uint8_t* inline_bytes() const { return reinterpret_cast<const uint8_t*>(this + 1); }
  uint64_t length_;
  const uint8_t* external_;
};

/// A value: a control word (bit 0: being written in place; bit 1: replaced by a newer record; the rest a
/// generation count), the bytes reserved, the bytes used, then the bytes.
class Value {
 public:
  Value() : control_{0}, size_{0}, length_{0} {}
  inline uint32_t size() const { return size_; }

  static constexpr uint64_t kLocked = 1;
  static constexpr uint64_t kReplaced = 2;
  static constexpr uint64_t kGeneration = 4;

  std::atomic<uint64_t> control_;
  uint32_t size_;
  uint32_t length_;

  inline uint8_t* bytes() { return reinterpret_cast<uint8_t*>(this + 1); }
  inline const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(this + 1); }
};

/// A deep copy of context `C` for a pending operation: `C`'s copy constructor puts its key's bytes (and any
/// other bytes it keeps) after itself, so the copy is allocated with `extra` bytes of room.
template <class C>
Status deep_copy(const C& context, uint64_t extra, IAsyncContext*& copy) {
  copy = nullptr;
  auto room = alloc_context<C>(static_cast<uint32_t>(sizeof(C) + extra));
  if(!room.get()) return Status::OutOfMemory;
  new(room.get()) C{context};
  copy = room.release();
  return Status::Ok;
}

typedef void (*read_callback)(void* target, const uint8_t* value, uint64_t length);

/// A read: hands the value to `callback(target, ...)` when found (now, or in CompletePending when it went to
/// disk).
class ReadContext : public IAsyncContext {
 public:
  typedef Key key_t;
  typedef Value value_t;

  ReadContext(const uint8_t* key, uint64_t key_length, read_callback callback, void* target)
      : callback_{callback}, target_{target}, key_{key, key_length} {}
  ReadContext(const ReadContext& other)
      : callback_{other.callback_}, target_{other.target_}, key_{other.key_} {}

  inline const Key& key() const { return key_; }
  inline void Get(const Value& value) {
    callback_(target_, value.bytes(), value.length_);
  }
  /// A record in the mutable region may be overwritten in place while it is read: copy it between two equal
  /// generations, waiting out a writer.
  inline void GetAtomic(const Value& value) {
    thread_local std::vector<uint8_t> copy;
    for(;;) {
      uint64_t before = value.control_.load(std::memory_order_acquire);
      if(before & Value::kLocked) {
        std::this_thread::yield();
        continue;
      }
      uint32_t length = value.length_;
      copy.resize(length);
      std::memcpy(copy.data(), value.bytes(), length);
      std::atomic_thread_fence(std::memory_order_acquire);
      if(value.control_.load(std::memory_order_relaxed) == before) {
        break;
      }
    }
    callback_(target_, copy.data(), copy.size());
  }

 protected:
  Status DeepCopy_Internal(IAsyncContext*& copy) { return deep_copy(*this, key_.length(), copy); }

 private:
  read_callback callback_;
  void* target_;
  Key key_;  // last: a deep copy keeps the key's bytes right after it
};

/// An upsert: the value's bytes, in place when the record is mutable and large enough.
class UpsertContext : public IAsyncContext {
 public:
  typedef Key key_t;
  typedef Value value_t;

  UpsertContext(const uint8_t* key, uint64_t key_length, const uint8_t* value, uint64_t length)
      : value_{value}, length_{length}, key_{key, key_length} {}
  /// A copy keeps the key's bytes after itself (`key_`'s copy), then the value's bytes after those.
  UpsertContext(const UpsertContext& other)
      : value_{nullptr}, length_{other.length_}, key_{other.key_} {
    uint8_t* room = reinterpret_cast<uint8_t*>(&key_ + 1) + key_.length();
    std::memcpy(room, other.value_, length_);
    value_ = room;
  }

  inline const Key& key() const { return key_; }
  inline uint32_t value_size() const { return static_cast<uint32_t>(sizeof(Value) + length_); }
  inline void Put(Value& value) {
    value.control_.store(0, std::memory_order_relaxed);
    value.size_ = value_size();
    value.length_ = static_cast<uint32_t>(length_);
    std::memcpy(value.bytes(), value_, length_);
  }
  inline bool PutAtomic(Value& value) {
    uint64_t control = value.control_.load(std::memory_order_acquire);
    for(;;) {
      if(control & Value::kReplaced) return false;
      if(control & Value::kLocked) {
        std::this_thread::yield();
        control = value.control_.load(std::memory_order_acquire);
        continue;
      }
      if(value.control_.compare_exchange_weak(control, control | Value::kLocked,
                                               std::memory_order_acquire)) {
        break;
      }
    }
    if(value.size_ < value_size()) {
      // too small to overwrite: FASTER appends a new record, and this one is never written again
      value.control_.store((control + Value::kGeneration) | Value::kReplaced, std::memory_order_release);
      return false;
    }
    value.length_ = static_cast<uint32_t>(length_);
    std::memcpy(value.bytes(), value_, length_);
    value.control_.store(control + Value::kGeneration, std::memory_order_release);
    return true;
  }

 protected:
  Status DeepCopy_Internal(IAsyncContext*& copy) { return deep_copy(*this, key_.length() + length_, copy); }

 private:
  const uint8_t* value_;
  uint64_t length_;
  Key key_;  // last: a deep copy keeps the key's bytes, then the value's, right after it
};

/// A delete (a tombstone record).
class DeleteContext : public IAsyncContext {
 public:
  typedef Key key_t;
  typedef Value value_t;

  DeleteContext(const uint8_t* key, uint64_t key_length) : key_{key, key_length} {}
  DeleteContext(const DeleteContext& other) : key_{other.key_} {}

  inline const Key& key() const { return key_; }
  inline uint32_t value_size() const { return sizeof(Value); }

 protected:
  Status DeepCopy_Internal(IAsyncContext*& copy) { return deep_copy(*this, key_.length(), copy); }

 private:
  Key key_;
};

typedef FASTER::environment::QueueIoHandler handler_t;
typedef FASTER::device::FileSystemDisk<handler_t, 1073741824L> disk_t;
typedef FasterKv<Key, Value, disk_t> store_t;

/// Frees a deep-copied context when FASTER finishes a pending operation.
template <class C>
void release(IAsyncContext* context, Status) {
  CallbackContext<C> owned{context};
}

std::atomic<uint64_t> persisted_sessions{0};

void hybrid_log_persisted(Status result, uint64_t) {
  if(result == Status::Ok) ++persisted_sessions;
}

/// Threads holding a session on each open store. A store is destroyed only once none does.
std::mutex registry_lock;
std::unordered_map<store_t*, int> registry;

/// The stores the calling thread holds a session on, ended when the thread exits. Constructed after FASTER's
/// own thread id (see `ensure_session`), so it is destroyed before it: C++ destroys a thread's thread_local
/// objects in the reverse order of their construction. (A Rust thread-local would be destroyed after FASTER's
/// id, and its StopSession would then act on a released id.)
struct Sessions {
  std::vector<store_t*> stores;
  uint64_t operations = 0;
  ~Sessions() {
    std::lock_guard<std::mutex> hold{registry_lock};
    for(store_t* s : stores) {
      auto at = registry.find(s);
      if(at != registry.end()) {
        s->StopSession();
        --at->second;
      }
    }
  }
};

Sessions& sessions() {
  Thread::id();  // FASTER's thread id first: see Sessions
  thread_local Sessions mine;
  return mine;
}

/// Makes sure the calling thread holds a session on `s`, and refreshes it every 64 operations, as FASTER's own
/// benchmark does.
inline void ensure_session(store_t* s) {
  Sessions& mine = sessions();
  bool found = false;
  for(store_t* x : mine.stores) {
    if(x == s) {
      found = true;
      break;
    }
  }
  if(!found) {
    s->StartSession();
    mine.stores.push_back(s);
    std::lock_guard<std::mutex> hold{registry_lock};
    ++registry[s];
  } else if(++mine.operations % 64 == 0) {
    s->Refresh();
  }
}

/// Ends the calling thread's session on `s`, if it holds one.
void end_session(store_t* s) {
  Sessions& mine = sessions();
  for(size_t i = 0; i < mine.stores.size(); ++i) {
    if(mine.stores[i] == s) {
      s->CompletePending(true);
      s->StopSession();
      mine.stores.erase(mine.stores.begin() + i);
      std::lock_guard<std::mutex> hold{registry_lock};
      --registry[s];
      return;
    }
  }
}

void copy_message(const std::exception& e, char* error, size_t capacity) {
  if(error != nullptr && capacity > 0) {
    std::strncpy(error, e.what(), capacity - 1);
    error[capacity - 1] = 0;
  }
}

}  // namespace

extern "C" {

/// Opens a store whose log lives in `dir`: `table_size` hash buckets (a power of two), `log_size` bytes of
/// in-memory log (a multiple of 32 MiB), the newest `mutable_fraction` of it mutable; recovers the checkpoint
/// `token` when it is not null. Null on error, with the reason in `error`.
void* cosine_faster_open(uint64_t table_size, uint64_t log_size, const char* dir, double mutable_fraction,
                         const char* token, char* error, size_t capacity) {
  try {
    store_t* store = new store_t{table_size, log_size, dir, mutable_fraction, false};
    if(token != nullptr) {
      Guid guid = Guid::Parse(token);
      uint32_t version;
      std::vector<Guid> recovered;
      Status status = store->Recover(guid, guid, version, recovered);
      if(status != Status::Ok) {
        delete store;
        std::snprintf(error, capacity, "recovery from checkpoint %s failed (status %d)", token,
                      static_cast<int>(status));
        return nullptr;
      }
    }
    std::lock_guard<std::mutex> hold{registry_lock};
    registry[store] = 0;
    return store;
  } catch(const std::exception& e) {
    copy_message(e, error, capacity);
    return nullptr;
  }
}

/// Ends the calling thread's session, waits (up to `wait_ms`) until no other thread holds one, takes a full
/// checkpoint (the hash index and a fold-over of the log) unless `checkpoint` is false, writing its token (36
/// characters and a NUL) into `token`, and destroys the store. Returns 0 when closed with a checkpoint, 1 when
/// closed without one (not asked for, or it could not start), 2 when other threads still held sessions (the
/// store is left open).
int cosine_faster_close(void* store, bool checkpoint, char* token, uint64_t wait_ms) {
  store_t* s = static_cast<store_t*>(store);
  end_session(s);
  for(uint64_t waited = 0;; ++waited) {
    {
      std::lock_guard<std::mutex> hold{registry_lock};
      if(registry[s] == 0) break;
    }
    if(waited >= wait_ms) return 2;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  int result = 1;
  if(checkpoint) {
    ensure_session(s);
    Guid guid;
    uint64_t before = persisted_sessions.load();
    if(s->Checkpoint(nullptr, hybrid_log_persisted, guid)) {
      while(persisted_sessions.load() == before) {
        s->CompletePending(false);
        std::this_thread::yield();
      }
      // returns once this thread's phase is back at REST: the checkpoint is over
      s->CompletePending(true);
      std::string text = guid.ToString();
      std::strncpy(token, text.c_str(), 37);
      token[36] = 0;
      result = 0;
    }
    end_session(s);
  }
  {
    std::lock_guard<std::mutex> hold{registry_lock};
    registry.erase(s);
  }
  delete s;
  return result;
}

/// Ends the calling thread's session on the store, if it holds one (an idle thread holding one stalls the
/// log's epochs, and with them every other thread once the in-memory log is full).
void cosine_faster_end_session(void* store) { end_session(static_cast<store_t*>(store)); }

/// Writes a value, in the calling thread's session (started on first use). Returns FASTER's status: 0 done
/// (after completing it when it went pending), another value on error.
uint8_t cosine_faster_upsert(void* store, const uint8_t* key, uint64_t key_length, const uint8_t* value,
                             uint64_t length) {
  store_t* s = static_cast<store_t*>(store);
  ensure_session(s);
  UpsertContext context{key, key_length, value, length};
  Status status = s->Upsert(context, release<UpsertContext>, 1);
  if(status == Status::Pending) {
    s->CompletePending(true);
    status = Status::Ok;
  }
  return static_cast<uint8_t>(status);
}

/// Reads a value into `callback(target, ...)`, in the calling thread's session. Returns 0 found, 2 not found,
/// 1 when the read went to disk and has completed (the callback ran if it found the key), another value on
/// error.
uint8_t cosine_faster_read(void* store, const uint8_t* key, uint64_t key_length, read_callback callback,
                           void* target) {
  store_t* s = static_cast<store_t*>(store);
  ensure_session(s);
  ReadContext context{key, key_length, callback, target};
  Status status = s->Read(context, release<ReadContext>, 1);
  if(status == Status::Pending) {
    s->CompletePending(true);
  }
  return static_cast<uint8_t>(status);
}

}  // extern "C"
