package io.pidpool.core.allocation;

import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.IntFunction;

/** Iterates positions {@code 0..size-1} of array-backed views, mapping each to an element. */
final class IndexIterator<T> implements Iterator<T> {
    private final int size;
    private final IntFunction<T> at;
    private int next;

    IndexIterator(int size, IntFunction<T> at) {
        this.size = size;
        this.at = at;
    }

    @Override
    public boolean hasNext() {
        return next < size;
    }

    @Override
    public T next() {
        if (next >= size) {
            throw new NoSuchElementException();
        }
        return at.apply(next++);
    }
}
