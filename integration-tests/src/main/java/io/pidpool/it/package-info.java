/** PidPool it. */
package io.pidpool.it;
