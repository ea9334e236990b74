/** Values and enums of the PidPool domain: modules, accounts, instances, epochs, node states, batches. */
package io.pidpool.core.model;
