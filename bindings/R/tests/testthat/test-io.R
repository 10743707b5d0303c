test_that("mx.io.MNISTIter gives batches of R dim c(784, batch) equal to the idx files' bytes", {
  skip_without_fmnist()
  it <- mx.io.MNISTIter(image = fmnist.file("t10k-images-idx3-ubyte.gz"), label = fmnist.file("t10k-labels-idx1-ubyte.gz"),
                        batch.size = 50, shuffle = FALSE, flat = TRUE)
  expect_true(is.mx.dataiter(it))
  expect_true(it$iter.next())
  batch <- it$value()
  expect_equal(dim(batch$data), c(784L, 50L))
  expect_equal(dim(batch$label), 50L)
  ref <- read.idx(fmnist.file("t10k-images-idx3-ubyte.gz"), fmnist.file("t10k-labels-idx1-ubyte.gz"), 50)
  expect_equal(as.array(batch$data), array(ref$x, c(784, 50)), tolerance = 1e-6)
  expect_identical(as.vector(as.array(batch$label)), as.double(ref$y))
  expect_equal(it$num.pad(), 0)
  n <- 1
  while (it$iter.next()) n <- n + 1
  expect_equal(n, 200)
  it$reset()
  expect_true(it$iter.next())
  expect_identical(as.array(it$value()$label), as.array(batch$label))
  image <- mx.io.MNISTIter(image = fmnist.file("t10k-images-idx3-ubyte.gz"),
                           label = fmnist.file("t10k-labels-idx1-ubyte.gz"), batch_size = 10, flat = FALSE)
  image$iter.next()
  expect_equal(dim(image$value()$data), c(28L, 28L, 1L, 10L))
})

test_that("bad iterator parameters give R errors naming them", {
  expect_error(mx.io.MNISTIter(image = file.path(tempdir(), "missing-images.gz"), label = fmnist.file("t10k-labels-idx1-ubyte.gz"),
                               batch.size = 10), "missing-images")
  expect_error(mx.io.MNISTIter(image = fmnist.file("t10k-images-idx3-ubyte.gz"), label = fmnist.file("t10k-labels-idx1-ubyte.gz"),
                               no_such_param = 1), "no_such_param")
  expect_true("batch.size" %in% names(formals(mx.io.MNISTIter)))
})

test_that("mx.io.arrayiter batches R arrays and pads the last batch", {
  x <- matrix(as.double(1:20), 2, 10)
  it <- mx.io.arrayiter(x, 0:9, batch.size = 4)
  batches <- list()
  while (it$iter.next()) batches[[length(batches) + 1]] <- list(v = it$value(), pad = it$num.pad())
  expect_length(batches, 3)
  expect_identical(as.array(batches[[1]]$v$data), x[, 1:4])
  expect_identical(as.array(batches[[3]]$v$label), array(c(8, 9, 0, 1), 4))
  expect_equal(batches[[3]]$pad, 2)
})
