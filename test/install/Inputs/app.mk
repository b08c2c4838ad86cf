# The out-of-tree Makefile of install.test: everything about pkc comes from
# pkg-config (PKG_CONFIG_PATH names the installation).  `app` links
# libpkrt.so, `app-static` libpkrt.a with the --static flags.
PKG_CONFIG ?= pkg-config
PKC := $(shell $(PKG_CONFIG) --variable=pkc pkc)
CFLAGS := -O2 -Wall -Werror $(shell $(PKG_CONFIG) --cflags pkc)
LDLIBS := $(shell $(PKG_CONFIG) --libs pkc)
STATIC_LDLIBS := $(shell $(PKG_CONFIG) --variable=libdir pkc)/libpkrt.a \
                 $(filter-out -lpkrt,$(shell $(PKG_CONFIG) --static --libs pkc))

all: app app-static

app: main.o add_vectors.o
	$(CC) -o $@ main.o add_vectors.o $(LDLIBS)

app-static: main.o add_vectors.o
	$(CC) -o $@ main.o add_vectors.o $(STATIC_LDLIBS)

main.o: main.c add_vectors.h
	$(CC) $(CFLAGS) -c -o $@ main.c

add_vectors.o add_vectors.h &: add_vectors.pk
	$(PKC) add_vectors.pk -o add_vectors.o
