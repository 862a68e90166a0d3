// SPDX-License-Identifier: Apache-2.0
// Recordings of `mtier record`: a versioned binary file of snapshots
// (snapshot.h) taken at an interval, documented in docs/recording.md.
//
// A file is the 8-byte magic "MTREC\x00\x02\n" (format version 2) followed by
// records, each one self-delimiting and checksummed:
//   u32 type, u32 payload_bytes, payload, u32 CRC-32C (over type,
//   payload_bytes and payload), all little-endian.
// Format 1 (mtier 0.1) differs only in its checksum, CRC-32/ISO-HDLC (zlib's
// crc32): it is still read, but not appended to.
// Type 1 INFO starts a session (what was recorded, how, by whom); type 2
// SNAPSHOT holds one Snapshot. A writer adds each record with one write()
// to a file opened O_APPEND, so a recording cut off by a crash is readable
// up to its last complete record, and a later `mtier record --append` adds a
// new session after it. Unknown record types are skipped (forward
// compatible); a bad checksum or a short record ends the readable part.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "record/snapshot.h"

namespace mtier::record {

inline constexpr uint32_t kRecordingVersion = 2;  // the format written

struct SessionInfo {
  uint64_t start_unix_ms = 0;
  uint32_t interval_ms = 0;
  uint32_t buckets = 0;     // heat-map slices asked for per table
  int32_t pid = 0;          // the process recorded; 0 = every process the user may see
  std::string command;      // the command run under `mtier record -- CMD`, or ""
  std::string host;
  std::string policy;       // the daemon's policy and parameters at the start
  std::string heat_source;  // the daemon's heat source at the start
};

struct Recording {
  std::vector<SessionInfo> sessions;
  std::vector<Snapshot> snapshots;  // in file order (time order within a session)
  // The file ended inside a record or a record failed its checksum: what
  // came before is here, `tail_problem` says what was wrong and where.
  bool truncated = false;
  std::string tail_problem;
  uint64_t valid_bytes = 0;  // bytes up to the end of the last good record
  unsigned version = 0;      // the file's format (1: mtier 0.1's CRC-32 records)
};

// Reads the whole file. 0 (also when truncated: see Recording::truncated),
// -errno when it cannot be read, -EINVAL when it is not a recording (magic)
// or of a newer version, or when it holds no INFO record; *why says which in
// one line that names the file.
[[nodiscard]] int read_recording(const std::string& path, Recording* out, std::string* why);

class RecordingWriter {
 public:
  RecordingWriter() = default;
  ~RecordingWriter();  // closes
  RecordingWriter(const RecordingWriter&) = delete;
  RecordingWriter& operator=(const RecordingWriter&) = delete;

  // Creates `path` (refusing an existing file unless `append`), or with
  // `append` opens an existing recording (its magic checked; a cut-off tail
  // is cut away first so the new session starts on a record boundary), and
  // writes the INFO record. 0 or -errno, *why one line.
  [[nodiscard]] int open(const std::string& path, bool append, const SessionInfo& info,
                         std::string* why);
  // Adds one SNAPSHOT record. 0 or -errno, *why one line.
  [[nodiscard]] int write(const Snapshot& s, std::string* why);
  void close();
  uint64_t records() const { return records_; }

 private:
  int write_record(uint32_t type, const std::string& payload, std::string* why);

  int fd_ = -1;
  std::string path_;
  uint64_t records_ = 0;
};

// The payload encodings, exposed for the tests (and the fuzz-style checks):
// decode refuses anything that does not parse exactly (-EBADMSG).
std::string encode_info(const SessionInfo& info);
[[nodiscard]] int decode_info(const std::string& payload, SessionInfo* out);
std::string encode_snapshot(const Snapshot& s);
[[nodiscard]] int decode_snapshot(const std::string& payload, Snapshot* out);

}  // namespace mtier::record
