// One file for the search core: the pattern (with its DFA cache shared by the workers), the buffer scan
// and the parallel walk over files, whose results keep path order; the tools (grep, glob) are in
// tools/builtin/.
#include "tools/search.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>

#include <re2/filtered_re2.h>
#include <re2/re2.h>
#include <sys/stat.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/support/text.h"
#include "tools/builtin/builtin_tools.h"

namespace agentd::tools {

using support::Errc;
using support::Error;

namespace {

constexpr std::size_t kNpos = std::string_view::npos;

// How often a search inside one big file looks at the cancel token: a window this large is searched
// in one go (a few milliseconds), then the token is checked.
constexpr std::size_t kCancelWindowBytes = std::size_t{4} << 20;
// A file this large is not read: two workers holding such buffers is already a lot of memory, and a
// model gains nothing from matches in a multi-GiB log.
constexpr std::size_t kMaxSearchFileBytes = std::size_t{256} << 20;
// Work items a worker takes from the queue at once, so the lock is not taken per file.
constexpr std::size_t kBatch = 16;
// Atoms shorter than this make a poor prefilter (too many candidates to verify).
constexpr int kMinAtomBytes = 3;
// An atom is worth searching for first when it is at least this long, or its rarest byte is outside the
// most common ones (see kCommonBytes).
constexpr std::size_t kMinGoodAtomBytes = 4;
constexpr int kMinGoodAtomRank = 20;

// Bytes from most to least common in source code, roughly; a needle is searched by its rarest byte so
// memchr skips the most text between candidates. Bytes not listed (control bytes, non-ASCII) are rare.
constexpr std::string_view kCommonBytes =
    " e\tt_rnisaoc;l(d)\n,pu=*f>-m.hb0xg1\"/kvyT2E:S{}RwAC#NIL8O3D4P&F+M!][5'<6UB9|7GV?KHWqY%X@zj\\QJZ~$`^";

constexpr std::array<std::uint8_t, 256> make_ranks() {
  std::array<std::uint8_t, 256> ranks{};
  for (auto& r : ranks) r = 255;
  for (std::size_t i = 0; i < kCommonBytes.size(); ++i) ranks[static_cast<unsigned char>(kCommonBytes[i])] = i;
  return ranks;
}
constexpr std::array<std::uint8_t, 256> kRanks = make_ranks();

char ascii_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
char ascii_upper(char c) noexcept { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

// The first byte in [p, end) equal to `a` or `b`, or nullptr.
const char* find_either(const char* p, const char* end, char a, char b) noexcept {
  if (a == b) return static_cast<const char*>(::memchr(p, a, static_cast<std::size_t>(end - p)));
#if defined(__SSE2__)
  const __m128i va = _mm_set1_epi8(a);
  const __m128i vb = _mm_set1_epi8(b);
  for (; end - p >= 16; p += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const int mask = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, va), _mm_cmpeq_epi8(x, vb)));
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
  }
#endif
  for (; p < end; ++p) {
    if (*p == a || *p == b) return p;
  }
  return nullptr;
}

// '\n' bytes in [p, end).
std::size_t count_newlines(const char* p, const char* end) noexcept {
  std::size_t count = 0;
#if defined(__SSE2__)
  const __m128i nl = _mm_set1_epi8('\n');
  for (; end - p >= 16; p += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    count +=
        static_cast<std::size_t>(__builtin_popcount(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, nl)))));
  }
#endif
  for (; p < end; ++p) count += *p == '\n' ? 1 : 0;
  return count;
}

// A fixed string found by its rarest byte: memchr (or a two-byte SIMD scan when folding ASCII case)
// jumps between candidates, and each is compared in full. This is how ripgrep's literal search wins.
class Needle {
 public:
  Needle() = default;
  Needle(std::string bytes, bool fold_ascii) : bytes_(std::move(bytes)), fold_(fold_ascii) {
    if (fold_) std::transform(bytes_.begin(), bytes_.end(), bytes_.begin(), ascii_lower);
    int best = -1;
    for (std::size_t i = 0; i < bytes_.size(); ++i) {
      const char c = bytes_[i];
      int rank = kRanks[static_cast<unsigned char>(c)];
      // Folding, both cases are searched: the byte is as common as the more common of the two.
      if (fold_) rank = std::min(rank, static_cast<int>(kRanks[static_cast<unsigned char>(ascii_upper(c))]));
      if (rank > best) {
        best = rank;
        rare_offset_ = i;
      }
    }
    rare_rank_ = best;
  }

  bool empty() const noexcept { return bytes_.empty(); }
  std::size_t size() const noexcept { return bytes_.size(); }
  int rare_rank() const noexcept { return rare_rank_; }

  // The start of the first occurrence in text[from, end), or kNpos.
  std::size_t find(std::string_view text, std::size_t from, std::size_t end) const noexcept {
    const std::size_t n = bytes_.size();
    if (n == 0 || end < from || end - from < n) return kNpos;
    const char* base = text.data();
    const char rare = bytes_[rare_offset_];
    const char rare_other = fold_ ? ascii_upper(rare) : rare;
    // Candidates for the rare byte lie where a whole needle around them still fits in the range.
    const char* p = base + from + rare_offset_;
    const char* last = base + end - (n - rare_offset_ - 1);
    while (p < last) {
      const char* hit = find_either(p, last, rare, rare_other);
      if (hit == nullptr) return kNpos;
      const char* start = hit - rare_offset_;
      if (equal_at(start)) return static_cast<std::size_t>(start - base);
      p = hit + 1;
    }
    return kNpos;
  }

 private:
  bool equal_at(const char* start) const noexcept {
    if (!fold_) return ::memcmp(start, bytes_.data(), bytes_.size()) == 0;
    for (std::size_t i = 0; i < bytes_.size(); ++i) {
      if (ascii_lower(start[i]) != bytes_[i]) return false;
    }
    return true;
  }

  std::string bytes_;
  bool fold_ = false;
  std::size_t rare_offset_ = 0;
  int rare_rank_ = -1;
};

bool is_plain_literal(std::string_view pattern) { return pattern.find_first_of("\\^$.|?*+()[]{}") == kNpos; }

// Whether FilteredRE2's atoms (lowercased) can be found with an ASCII case-insensitive search: every
// character the regex requires must come from an ASCII byte of the pattern itself. Unicode case folding
// (`(?i)k` also matches the Kelvin sign) and escapes that name a code point (`\x{130}`, `\460`) could
// lowercase into an ASCII atom the text does not hold in any ASCII case, so such patterns go without.
bool atoms_are_ascii_safe(std::string_view pattern, bool case_insensitive) {
  if (case_insensitive) return false;
  if (pattern.find("(?") != kNpos) return false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const auto c = static_cast<unsigned char>(pattern[i]);
    if (c >= 0x80) return false;
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      if (next == 'x' || (next >= '0' && next <= '9')) return false;
      ++i;
    }
  }
  return true;
}

std::string_view line_of(std::string_view text, std::size_t at, std::size_t floor, std::size_t* start) {
  const char* base = text.data();
  const void* nl = ::memrchr(base + floor, '\n', at - floor);
  *start = nl == nullptr ? floor : static_cast<std::size_t>(static_cast<const char*>(nl) - base) + 1;
  const void* end_nl = ::memchr(base + at, '\n', text.size() - at);
  const std::size_t end =
      end_nl == nullptr ? text.size() : static_cast<std::size_t>(static_cast<const char*>(end_nl) - base);
  return text.substr(*start, end - *start);
}

}  // namespace

struct Matcher::Impl {
  enum class Kind { literal, regex, regex_with_literal };
  Kind kind = Kind::regex;
  Needle needle;               // literal, or the regex's required atom
  std::unique_ptr<RE2> regex;  // regex kinds

  // The offset of a byte of the first line in text[from, end) holding a match. `from` is a line start,
  // and `end` the end of the text or just past a '\n'.
  std::size_t find(std::string_view text, std::size_t from, std::size_t end) const {
    switch (kind) {
      case Kind::literal: return needle.find(text, from, end);
      case Kind::regex: {
        re2::StringPiece match;
        if (!regex->Match(re2::StringPiece(text.data(), text.size()), from, end, RE2::UNANCHORED, &match, 1)) {
          return kNpos;
        }
        const auto at = static_cast<std::size_t>(match.data() - text.data());
        // An empty match past the final '\n' (`^`, `x*`) is on no line at all.
        return at >= text.size() && (text.empty() || text.back() == '\n') ? kNpos : at;
      }
      case Kind::regex_with_literal: {
        // Every match holds the atom: find the atom, then ask the regex about that one line only.
        std::size_t pos = from;
        while (pos < end) {
          const std::size_t hit = needle.find(text, pos, end);
          if (hit == kNpos) return kNpos;
          std::size_t line_start = 0;
          const std::string_view line = line_of(text, hit, pos, &line_start);
          const std::size_t line_end = line_start + line.size();
          if (regex->Match(re2::StringPiece(text.data(), text.size()), line_start, line_end, RE2::UNANCHORED, nullptr,
                           0)) {
            return hit;
          }
          pos = line_end + 1;
        }
        return kNpos;
      }
    }
    return kNpos;
  }
};

support::Result<Matcher> Matcher::compile(const SearchPattern& pattern) {
  if (pattern.pattern.find('\n') != kNpos) {
    return Error(Errc::invalid_argument,
                 "the pattern holds a line break, but grep matches within one line at a time; search for one "
                 "line of it");
  }
  auto impl = std::make_shared<Impl>();
  if (!pattern.case_insensitive && (pattern.literal || is_plain_literal(pattern.pattern))) {
    impl->kind = Impl::Kind::literal;
    impl->needle = Needle(pattern.pattern, false);
    return Matcher(std::move(impl));
  }

  RE2::Options options;
  options.set_log_errors(false);
  options.set_case_sensitive(!pattern.case_insensitive);
  options.set_literal(pattern.literal);
  // Line semantics: nothing matches '\n' (not `\s`, not `[^a]`), so a match found in a whole file
  // buffer lies inside one line and the buffer can be searched in one pass.
  options.set_never_nl(true);
  // The DFA's cache, shared by the worker threads; a complex pattern that outgrows it falls back to the
  // (still linear) NFA.
  options.set_max_mem(std::int64_t{64} << 20);
  // `^` and `$` at line ends, as in grep; RE2 only offers that as a flag in the pattern.
  const std::string full = pattern.literal ? pattern.pattern : "(?m)" + pattern.pattern;
  impl->regex = std::make_unique<RE2>(full, options);
  if (!impl->regex->ok()) {
    std::string message = impl->regex->error();
    if (!pattern.literal) {
      // Report the error against the pattern as the model wrote it, without our prefix.
      const RE2 plain(pattern.pattern, options);
      if (!plain.ok()) message = plain.error();
    }
    return Error(Errc::invalid_argument, message);
  }

  if (atoms_are_ascii_safe(pattern.pattern, pattern.case_insensitive) && !pattern.literal) {
    // FilteredRE2 reduces the regex to an AND/OR tree of substrings ("atoms"). An atom without which
    // the tree cannot pass is in every match: search for it first, and run the regex on those lines only.
    re2::FilteredRE2 filter(kMinAtomBytes);
    int id = 0;
    if (filter.Add(full, options, &id) == RE2::NoError) {
      std::vector<std::string> atoms;
      filter.Compile(&atoms);
      Needle best;
      for (std::size_t i = 0; i < atoms.size(); ++i) {
        std::vector<int> others;
        for (std::size_t j = 0; j < atoms.size(); ++j) {
          if (j != i) others.push_back(static_cast<int>(j));
        }
        std::vector<int> passing;
        filter.AllPotentials(others, &passing);
        if (!passing.empty()) continue;  // the regex can match without this atom
        Needle candidate(atoms[i], true);
        if (best.empty() || candidate.rare_rank() > best.rare_rank() ||
            (candidate.rare_rank() == best.rare_rank() && candidate.size() > best.size())) {
          best = std::move(candidate);
        }
      }
      // Each line holding the atom costs a regex call: a short, common atom (`int`) would cost more than
      // letting RE2 scan the whole buffer.
      if (!best.empty() && (best.size() >= kMinGoodAtomBytes || best.rare_rank() >= kMinGoodAtomRank)) {
        impl->kind = Impl::Kind::regex_with_literal;
        impl->needle = std::move(best);
      }
    }
  }
  return Matcher(std::move(impl));
}

std::size_t Matcher::find(std::string_view text, std::size_t from) const {
  return impl_->find(text, from, text.size());
}

std::string_view Matcher::strategy() const noexcept {
  switch (impl_->kind) {
    case Impl::Kind::literal: return "literal";
    case Impl::Kind::regex: return "regex";
    case Impl::Kind::regex_with_literal: return "regex+literal";
  }
  return "regex";
}

bool path_less(std::string_view a, std::string_view b) noexcept {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] == b[i]) continue;
    // '/' sorts before every other byte, so a directory's contents stay together.
    if (a[i] == '/') return true;
    if (b[i] == '/') return false;
    return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
  }
  return a.size() < b.size();
}

namespace {

std::size_t decimal_digits(std::size_t n) {
  std::size_t digits = 1;
  while (n >= 10) {
    n /= 10;
    ++digits;
  }
  return digits;
}

// The bytes a line takes in `path:line:text` output (with a cut note), for the kept-bytes budget.
std::size_t output_bytes(const std::string& path, const SearchLine& line) {
  return path.size() + decimal_digits(line.number) + line.text.size() + 3 + (line.cut_bytes > 0 ? 32 : 0);
}

// Builds one file's lines as the search finds matches. Context lines are added as the gaps between
// matches are known; lines stop being stored (counting goes on) once they would pass the budget.
class LineCollector {
 public:
  LineCollector(std::string_view text, const SearchOptions& options, FileMatches& out)
      : text_(text), options_(options), out_(out) {}

  // A match on the line [start, start + size).
  void add_match(std::size_t start, std::size_t size) {
    ++out_.matched_lines;
    if (!out_.complete) return;
    // Line numbers are counted only up to where they are needed.
    number_ += count_newlines(text_.data() + counted_to_, text_.data() + start);
    counted_to_ = start;
    flush_after(start);
    add_before(start);
    push(number_, true, start, size);
    emitted_end_ = start + size + 1;
    emitted_number_ = number_;
    after_left_ = options_.context_after;
  }

  // After the last match: its after-context up to the end of the text.
  void finish() {
    if (out_.complete) flush_after(text_.size());
  }

 private:
  // After-context of the previous match, on lines before `limit`.
  void flush_after(std::size_t limit) {
    while (after_left_ > 0 && emitted_end_ < limit && emitted_end_ < text_.size()) {
      const void* nl = ::memchr(text_.data() + emitted_end_, '\n', text_.size() - emitted_end_);
      const std::size_t end =
          nl == nullptr ? text_.size() : static_cast<std::size_t>(static_cast<const char*>(nl) - text_.data());
      push(emitted_number_ + 1, false, emitted_end_, end - emitted_end_);
      ++emitted_number_;
      emitted_end_ = end + 1;
      --after_left_;
    }
    after_left_ = 0;
  }

  // Before-context of the match whose line starts at `start` (line number_), not reaching back into
  // lines already emitted.
  void add_before(std::size_t start) {
    std::size_t want = options_.context_before;
    std::size_t begin = start;
    std::size_t lines = 0;
    while (lines < want && begin > emitted_end_ && begin > 0) {
      // The line before ends with the '\n' at begin - 1; it starts after the '\n' before that.
      const void* nl = ::memrchr(text_.data() + emitted_end_, '\n', begin - 1 - emitted_end_);
      begin = nl == nullptr ? emitted_end_ : static_cast<std::size_t>(static_cast<const char*>(nl) - text_.data()) + 1;
      ++lines;
    }
    std::size_t pos = begin;
    for (std::size_t k = lines; k > 0; --k) {
      const std::size_t end = static_cast<std::size_t>(
          static_cast<const char*>(::memchr(text_.data() + pos, '\n', start - pos)) - text_.data());
      push(number_ - k, false, pos, end - pos);
      pos = end + 1;
    }
  }

  void push(std::size_t number, bool is_match, std::size_t start, std::size_t size) {
    if (!out_.complete) return;
    SearchLine line;
    line.number = number;
    line.is_match = is_match;
    std::string_view text = text_.substr(start, size);
    if (text.size() > options_.max_line_bytes) {
      std::size_t cut = options_.max_line_bytes;
      // Do not split a UTF-8 sequence.
      cut = support::utf8_floor(text, cut);
      line.cut_bytes = text.size() - cut;
      text = text.substr(0, cut);
    }
    line.text.assign(text);
    kept_bytes_ += output_bytes(out_.path, line);
    out_.lines.push_back(std::move(line));
    if (kept_bytes_ >= options_.max_kept_bytes) out_.complete = false;
  }

  std::string_view text_;
  const SearchOptions& options_;
  FileMatches& out_;
  std::size_t number_ = 1;       // the line number at counted_to_
  std::size_t counted_to_ = 0;   // a line start
  std::size_t emitted_end_ = 0;  // just past the '\n' of the last line pushed (0: none yet)
  std::size_t emitted_number_ = 0;
  std::size_t after_left_ = 0;
  std::size_t kept_bytes_ = 0;
};

// The end of the window starting at `from`: a line boundary about kCancelWindowBytes on.
std::size_t window_end(std::string_view text, std::size_t from) {
  if (text.size() - from <= kCancelWindowBytes) return text.size();
  const void* nl = ::memchr(text.data() + from + kCancelWindowBytes, '\n', text.size() - from - kCancelWindowBytes);
  return nl == nullptr ? text.size() : static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) + 1;
}

// Searches one buffer; false when cancelled part way.
bool search_buffer(const Matcher::Impl& matcher, std::string_view text, const SearchOptions& options,
                   const support::CancelToken* cancel, FileMatches& out) {
  LineCollector lines(text, options, out);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = window_end(text, pos);
    while (pos < end) {
      const std::size_t hit = matcher.find(text, pos, end);
      if (hit == kNpos) {
        pos = end;
        break;
      }
      std::size_t start = 0;
      const std::string_view line = line_of(text, hit, pos, &start);
      lines.add_match(start, line.size());
      pos = start + line.size() + 1;
    }
    if (cancel != nullptr && pos < text.size() && cancel->cancelled()) return false;
  }
  lines.finish();
  return true;
}

}  // namespace

FileMatches search_text(const Matcher& matcher, std::string_view text, const SearchOptions& options) {
  FileMatches out;
  out.bytes = text.size();
  search_buffer(matcher.impl(), text, options, nullptr, out);
  return out;
}

namespace {

// A file read whole into a buffer that is reused from file to file (no zero-filling, no reallocation
// once it is large enough).
class FileBuffer {
 public:
  enum class Status { ok, unreadable, not_regular, too_large };

  Status read(const std::string& path) {
    size_ = 0;
    // O_NONBLOCK: opening a FIFO must not wait for a writer.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return Status::unreadable;
    const Status status = read_fd(fd);
    ::close(fd);
    return status;
  }

  std::string_view view() const noexcept { return {data_.get(), size_}; }

 private:
  Status read_fd(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Status::unreadable;
    if (!S_ISREG(st.st_mode)) return Status::not_regular;
    if (static_cast<std::uint64_t>(st.st_size) > kMaxSearchFileBytes) return Status::too_large;
    // One byte more than the size, so a file read to its end is seen to end without a second read
    // filling a fresh block; growing files are read on, within the cap.
    reserve(static_cast<std::size_t>(st.st_size) + 1);
    for (;;) {
      if (size_ == capacity_) {
        if (capacity_ > kMaxSearchFileBytes) return Status::too_large;
        reserve(capacity_ * 2);
      }
      const ssize_t n = ::read(fd, data_.get() + size_, capacity_ - size_);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::unreadable;
      }
      if (n == 0) return Status::ok;
      size_ += static_cast<std::size_t>(n);
    }
  }

  void reserve(std::size_t capacity) {
    if (capacity <= capacity_) return;
    capacity = std::max(capacity, std::size_t{64} << 10);
    auto grown = std::make_unique_for_overwrite<char[]>(capacity);
    if (size_ > 0) ::memcpy(grown.get(), data_.get(), size_);
    data_ = std::move(grown);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> data_;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
};

std::size_t file_output_bytes(const FileMatches& file) {
  std::size_t bytes = 0;
  for (const auto& line : file.lines) bytes += output_bytes(file.path, line);
  return bytes;
}

// The files with matches, kept in path order within the byte budget whatever order the workers finish
// in: past the budget, the files that sort last are dropped (counted) first. Since the kept files still
// hold at least the budget's worth of output, what a caller shows up to the budget is what it would show
// had everything been kept.
class Results {
 public:
  explicit Results(std::size_t budget) : budget_(budget) {}

  void add(FileMatches file) {
    const std::size_t bytes = file_output_bytes(file);
    const std::lock_guard lock(mutex_);
    ++matched_files_;
    matched_lines_ += file.matched_lines;
    if (kept_bytes_ >= budget_ && !kept_.empty() && path_less(kept_.rbegin()->first, file.path)) {
      drop(file.matched_lines);
      return;
    }
    kept_bytes_ += bytes;
    std::string key = file.path;
    kept_.emplace(std::move(key), Kept{std::move(file), bytes});
    while (kept_.size() > 1 && kept_bytes_ - std::prev(kept_.end())->second.bytes >= budget_) {
      auto last = std::prev(kept_.end());
      kept_bytes_ -= last->second.bytes;
      drop(last->second.file.matched_lines);
      kept_.erase(last);
    }
  }

  void fill(SearchReport& report) {
    const std::lock_guard lock(mutex_);
    report.matched_files = matched_files_;
    report.matched_lines = matched_lines_;
    report.omitted_files = omitted_files_;
    report.omitted_lines = omitted_lines_;
    report.files.reserve(kept_.size());
    for (auto& [path, kept] : kept_) report.files.push_back(std::move(kept.file));
    kept_.clear();
  }

 private:
  struct Kept {
    FileMatches file;
    std::size_t bytes = 0;
  };
  struct PathLess {
    bool operator()(const std::string& a, const std::string& b) const noexcept { return path_less(a, b); }
  };

  void drop(std::size_t lines) {
    ++omitted_files_;
    omitted_lines_ += lines;
  }

  const std::size_t budget_;
  std::mutex mutex_;
  std::map<std::string, Kept, PathLess> kept_;
  std::size_t kept_bytes_ = 0;
  std::size_t matched_files_ = 0;
  std::size_t matched_lines_ = 0;
  std::size_t omitted_files_ = 0;
  std::size_t omitted_lines_ = 0;
};

// Worker threads that search the files a producer queues, each with its own reused buffer.
class SearchPool {
 public:
  SearchPool(const Matcher::Impl& matcher, const SearchOptions& options, const support::CancelToken& cancel)
      : matcher_(matcher), options_(options), cancel_(cancel), results_(options.max_kept_bytes) {
    std::size_t threads = options.threads != 0 ? options.threads : std::thread::hardware_concurrency();
    threads = std::max<std::size_t>(threads, 1);
    workers_.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  SearchPool(const SearchPool&) = delete;
  SearchPool& operator=(const SearchPool&) = delete;
  ~SearchPool() { finish(); }

  void push(SearchTarget target) {
    {
      const std::lock_guard lock(mutex_);
      queue_.push_back(std::move(target));
    }
    ready_.notify_one();
  }

  // No more files: waits for the workers to search what is queued.
  void finish() {
    {
      const std::lock_guard lock(mutex_);
      closed_ = true;
    }
    ready_.notify_all();
    for (auto& worker : workers_) {
      if (worker.joinable()) worker.join();
    }
  }

  void fill(SearchReport& report) {
    results_.fill(report);
    report.searched_files = searched_.load();
    report.searched_bytes = searched_bytes_.load();
    report.binary_files = binary_.load();
    report.unreadable_files += unreadable_.load();
  }

 private:
  void work() {
    FileBuffer buffer;
    std::vector<SearchTarget> batch;
    for (;;) {
      batch.clear();
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return closed_ || !queue_.empty(); });
        if (queue_.empty()) return;
        while (!queue_.empty() && batch.size() < kBatch) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      for (auto& target : batch) {
        if (cancel_.cancelled()) return;
        search_one(target, buffer);
      }
    }
  }

  void search_one(SearchTarget& target, FileBuffer& buffer) {
    switch (buffer.read(target.path)) {
      case FileBuffer::Status::ok: break;
      case FileBuffer::Status::not_regular: return;  // a FIFO, socket or device: not a file to search
      case FileBuffer::Status::unreadable:
      case FileBuffer::Status::too_large: ++unreadable_; return;
    }
    const std::string_view text = buffer.view();
    ++searched_;
    // Binary, as git and grep decide it: a NUL byte near the start.
    if (text.substr(0, kBinarySniffBytes).find('\0') != kNpos) {
      ++binary_;
      return;
    }
    searched_bytes_ += text.size();
    FileMatches file;
    file.path = std::move(target.display);
    file.bytes = text.size();
    if (!search_buffer(matcher_, text, options_, &cancel_, file)) return;
    if (file.matched_lines > 0) results_.add(std::move(file));
  }

  const Matcher::Impl& matcher_;
  const SearchOptions& options_;
  const support::CancelToken& cancel_;
  Results results_;

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<SearchTarget> queue_;
  bool closed_ = false;

  std::atomic<std::size_t> searched_{0};
  std::atomic<std::size_t> searched_bytes_{0};
  std::atomic<std::size_t> binary_{0};
  std::atomic<std::size_t> unreadable_{0};
  std::vector<std::thread> workers_;  // last: started once everything they touch exists
};

}  // namespace

support::Result<SearchReport> search_files(const Matcher& matcher, const std::vector<SearchTarget>& files,
                                           const SearchOptions& options, const support::CancelToken& cancel) {
  if (cancel.cancelled()) return Error(Errc::cancelled, "search cancelled");
  SearchOptions pool_options = options;
  // One file needs one worker.
  if (files.size() <= 1) pool_options.threads = 1;
  SearchReport report;
  {
    SearchPool pool(matcher.impl(), pool_options, cancel);
    for (const auto& file : files) pool.push(file);
    pool.finish();
    pool.fill(report);
  }
  if (cancel.cancelled()) return Error(Errc::cancelled, "search cancelled");
  return report;
}

support::Result<SearchReport> search_tree(const Matcher& matcher, const std::string& root,
                                          const std::string& display_prefix, const WalkOptions& walk_options,
                                          const std::function<bool(std::string_view)>& include,
                                          const SearchOptions& options, const support::CancelToken& cancel) {
  if (cancel.cancelled()) return Error(Errc::cancelled, "search cancelled");
  SearchReport report;
  {
    SearchPool pool(matcher.impl(), options, cancel);
    auto walked = walk(
        root, walk_options,
        [&](const WalkEntry& entry) {
          // Symlinks are not followed (as rg does not): a link may lead out of the workspace, or loop.
          if (entry.is_dir || entry.is_symlink) return true;
          if (include && !include(entry.relative)) return true;
          pool.push(SearchTarget{entry.path, display_prefix + entry.relative});
          return true;
        },
        cancel);
    pool.finish();
    if (!walked) {
      if (cancel.cancelled()) return Error(Errc::cancelled, "search cancelled");
      return std::move(walked).error();
    }
    report.unreadable_files = walked->skipped_unreadable;
    pool.fill(report);
  }
  if (cancel.cancelled()) return Error(Errc::cancelled, "search cancelled");
  return report;
}

}  // namespace agentd::tools
