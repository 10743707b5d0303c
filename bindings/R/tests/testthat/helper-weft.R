# Shared by the tests: the Fashion-MNIST files, weft's sample programs, float32 bit patterns.

fmnist.dir <- "/usr/share/datasets/fashion-mnist"

fmnist.file <- function(name) file.path(fmnist.dir, name)

# A skip for a capability the machine lacks; where every capability must be present
# (WEFT_REQUIRE_ALL=1, as scripts/test.sh sets) it fails instead, so that CI never passes a test
# that did not run.
skip_unless_required <- function(why) {
  if (identical(Sys.getenv("WEFT_REQUIRE_ALL"), "1")) stop("WEFT_REQUIRE_ALL=1 and this test would skip: ", why)
  skip(why)
}

skip_without_fmnist <- function() {
  if (!file.exists(fmnist.file("t10k-images-idx3-ubyte.gz"))) {
    skip_unless_required("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)")
  }
}

# A weft program named by an environment variable (set by the ctest that runs R CMD check).
weft.program <- function(var) {
  path <- Sys.getenv(var)
  if (!nzchar(path) || !file.exists(path)) {
    skip_unless_required(paste0(var, " does not name the weft program (the ctest sets it)"))
  }
  path
}

# The hexadecimal bit patterns of float32 values (R holds float32 results exactly as doubles).
float32.bits <- function(x) {
  bytes <- matrix(as.character(writeBin(as.double(x), raw(), size = 4, endian = "big")), nrow = 4)
  apply(bytes, 2, paste, collapse = "")
}

# The images and labels of an idx file pair, read here with R alone (the idx format: a big-endian
# header of magic, count, rows, cols, then one unsigned byte per pixel / label).
read.idx <- function(images, labels, n) {
  con <- gzfile(images, "rb")
  on.exit(close(con))
  header <- readBin(con, "integer", n = 4, size = 4, endian = "big")
  pixels <- readBin(con, "raw", n = n * header[3] * header[4])
  lcon <- gzfile(labels, "rb")
  on.exit(close(lcon), add = TRUE)
  readBin(lcon, "integer", n = 2, size = 4, endian = "big")
  list(x = matrix(as.integer(pixels) / 255, nrow = header[3] * header[4], ncol = n),
       y = as.integer(readBin(lcon, "raw", n = n)))
}

mlp.symbol <- function() {
  data <- mx.symbol.Variable("data")
  fc1 <- mx.symbol.FullyConnected(data, name = "fc1", num_hidden = 128)
  act1 <- mx.symbol.Activation(fc1, name = "relu1", act_type = "relu")
  fc2 <- mx.symbol.FullyConnected(act1, name = "fc2", num_hidden = 64)
  act2 <- mx.symbol.Activation(fc2, name = "relu2", act_type = "relu")
  fc3 <- mx.symbol.FullyConnected(act2, name = "fc3", num_hidden = 10)
  mx.symbol.SoftmaxOutput(fc3, name = "softmax")
}

rss.mb <- function() {
  status <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmRSS", status, value = TRUE))) / 1024
}
