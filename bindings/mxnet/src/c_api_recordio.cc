// MXNet C API: RecordIO files (mx.recordio.MXRecordIO and MXIndexedRecordIO) on weft's
// RecordIOWriter / RecordIOReader (weft/recordio.h), byte-compatible with MXNet's .rec files.
// MXNet writes in place; weft's writer writes a temporary file that Free (Python's close())
// renames over the name, so an interrupted writer never leaves a torn file.
#include "common.h"
#include "weft/recordio.h"

using namespace weft;
using namespace weft::mx;

namespace {

// One handle kind for writers and readers, as MXNet's RecordIOHandle; each call checks it got the
// side it needs.
struct RecordIOH : Handle<HandleKind::kRecordIO> {
  std::unique_ptr<RecordIOWriter> writer;
  std::unique_ptr<RecordIOReader> reader;
  std::string record;  // the last record read: MXRecordIOReaderReadRecord's buffer
};

RecordIOH& Rec(RecordIOHandle h) { return *Handle<HandleKind::kRecordIO>::From<RecordIOH>(h); }

RecordIOWriter& Writer(RecordIOHandle h) {
  RecordIOH& r = Rec(h);
  if (!r.writer) Fail("RecordIO handle {} is a reader; this call needs one from MXRecordIOWriterCreate", h);
  return *r.writer;
}

RecordIOReader& Reader(RecordIOHandle h) {
  RecordIOH& r = Rec(h);
  if (!r.reader) Fail("RecordIO handle {} is a writer; this call needs one from MXRecordIOReaderCreate", h);
  return *r.reader;
}

}  // namespace

extern "C" {

int MXRecordIOWriterCreate(const char* uri, RecordIOHandle* out) {
  API_BEGIN();
  auto h = std::make_unique<RecordIOH>();
  h->writer = std::make_unique<RecordIOWriter>(NotNull(uri, "uri"));
  *NotNull(out, "out") = h.release();
  API_END();
}

// Closes the file (renaming it into place); an error closing it is reported, the handle freed.
int MXRecordIOWriterFree(RecordIOHandle handle) {
  API_BEGIN();
  std::unique_ptr<RecordIOH> h(&Rec(handle));
  if (!h->writer) Fail("RecordIO handle {} is a reader; free it with MXRecordIOReaderFree", handle);
  h->writer->Close();
  API_END();
}

int MXRecordIOWriterWriteRecord(RecordIOHandle handle, const char* buf, size_t size) {
  API_BEGIN();
  if (size > 0) NotNull(buf, "buf");
  Writer(handle).WriteRecord(buf, size);
  API_END();
}

int MXRecordIOWriterTell(RecordIOHandle handle, size_t* pos) {
  API_BEGIN();
  *NotNull(pos, "pos") = static_cast<size_t>(Writer(handle).Tell());
  API_END();
}

int MXRecordIOReaderCreate(const char* uri, RecordIOHandle* out) {
  API_BEGIN();
  auto h = std::make_unique<RecordIOH>();
  h->reader = std::make_unique<RecordIOReader>(NotNull(uri, "uri"));
  *NotNull(out, "out") = h.release();
  API_END();
}

int MXRecordIOReaderFree(RecordIOHandle handle) {
  API_BEGIN();
  std::unique_ptr<RecordIOH> h(&Rec(handle));
  if (!h->reader) Fail("RecordIO handle {} is a writer; free it with MXRecordIOWriterFree", handle);
  API_END();
}

// At the end of the file *buf is NULL and *size 0 (Python's read() returns None), as MXNet.
int MXRecordIOReaderReadRecord(RecordIOHandle handle, char const** buf, size_t* size) {
  API_BEGIN();
  NotNull(buf, "buf");
  NotNull(size, "size");
  RecordIOH& h = Rec(handle);
  if (!Reader(handle).ReadRecord(&h.record)) {
    *buf = nullptr;
    *size = 0;
  } else {
    *buf = h.record.data();
    *size = h.record.size();
  }
  API_END();
}

int MXRecordIOReaderSeek(RecordIOHandle handle, size_t pos) {
  API_BEGIN();
  Reader(handle).Seek(pos);
  API_END();
}

int MXRecordIOReaderTell(RecordIOHandle handle, size_t* pos) {
  API_BEGIN();
  *NotNull(pos, "pos") = static_cast<size_t>(Reader(handle).Tell());
  API_END();
}

}  // extern "C"
